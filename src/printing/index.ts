/**
 * Server-side printing (meta.k8s.io Tables): the table convertors of custom
 * resources and built-ins, and the Table of a list, an object or a watch event.
 */
export * from './builtin.js';
export { defaultTableConvertor } from './builtin-core.js';
export {
  buildTable,
  cellForJSONValue,
  customResourceTableConvertor,
  type BuildTableOptions,
  type CustomResourceTableConvertor,
  type PrinterColumn,
} from './custom-resource.js';
export { humanDuration } from './duration.js';
export { parseIncludeObject, partialObjectMetadata, tableForList, tableForObject, tableForWatchEvent } from './table.js';
export type {
  IncludeObject,
  PartialObjectMetadata,
  RowCells,
  Table,
  TableColumnDefinition,
  TableConvertor,
  TableListMeta,
  TableOptions,
  TableRow,
  TableRowCondition,
  TableVersion,
} from './types.js';
