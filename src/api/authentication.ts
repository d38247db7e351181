/** Who a request is from, as authentication (and impersonation) decided: k8s.io/apiserver's user.Info. */

export interface UserInfo {
  name: string;
  uid: string;
  groups: string[];
  /** Extra attributes (impersonation's Impersonate-Extra-* headers). */
  extra?: Record<string, string[]>;
}
