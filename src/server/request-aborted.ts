/** The client went away before its request was done: nobody is left to answer, and nothing to log. */
export class RequestAbortedError extends Error {
  constructor() {
    super('the client closed the request before its body was complete');
    this.name = 'RequestAbortedError';
  }
}
