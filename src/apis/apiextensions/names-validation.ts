/**
 * The name validators CRD validation uses: apimachinery's, from src/machinery,
 * plus the port-number check of the conversion webhook's service reference.
 */
export { byteLength } from '../../machinery/go-text.js';
export { isDNS1035Label, isDNS1123Subdomain, maxLenError, nameIsDNSSubdomain, regexError } from '../../machinery/validation.js';

export function isValidPortNum(port: number): string[] {
  return port >= 1 && port <= 65535 ? [] : ['must be between 1 and 65535, inclusive'];
}
