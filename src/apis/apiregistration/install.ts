/** The apiregistration.k8s.io group's resources: its rows of the built-in table (see resource-table.ts). */
import { apiServicePrinter } from '../../printing/index.js';
import { res, type BuiltinResource } from '../resource-table.js';
import { apiServiceStrategy } from './apiservice.js';

/** The resources of apiregistration.k8s.io kapi serves. */
export const APIREGISTRATION_RESOURCES: BuiltinResource[] = [
  res('apiregistration.k8s.io', 'v1', 'apiservices', 'APIService', false, { printer: apiServicePrinter, categories: ['api-extensions'], status: true, strategy: apiServiceStrategy }),
];
