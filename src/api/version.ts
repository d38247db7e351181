/** The Kubernetes version kapi serves as (/version), which also caps what "latest" means where upstream versions a policy (PodSecurity). */
export const KUBERNETES_VERSION = { major: '1', minor: '32', gitVersion: 'v1.32.0-kapi.0.1.0' };
