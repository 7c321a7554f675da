/**
 * What a Parquet file of vectors must look like (contract: "Parquet file format"), read from its
 * Arrow schema before any data: exactly one vector column, at most one integer id column, and
 * scalar metadata columns. Problems are typed so jobs can report them per file.
 */
import * as arrow from 'apache-arrow';
import type { FileErrorType } from '../../errors/job-errors.js';

export const VECTOR_COLUMNS = ['values', 'embedding', 'vector', 'embeddings', 'vectors'] as const;
export const ID_COLUMNS = ['id', 'vector_id', 'doc_id', 'index'] as const;

export type MetadataKind = 'number' | 'bigint' | 'string' | 'bool';

export interface FileShape {
  rows: number;
  rowGroups: number[];
  vectorColumn: string;
  /** The list's fixed size, when the column is a fixed-size list. */
  fixedDim: number | null;
  idColumn: string | null;
  metadata: { name: string; kind: MetadataKind }[];
}

/** A problem with a file, typed for job files' `error_type`. */
export interface LoadProblem {
  type: FileErrorType;
  message: string;
}

export class ShapeError extends Error {
  constructor(readonly type: FileErrorType, message: string) {
    super(message);
  }
}

function isFloatList(t: arrow.DataType): boolean {
  if (!(arrow.DataType.isList(t) || arrow.DataType.isFixedSizeList(t))) return false;
  const child = (t as arrow.List | arrow.FixedSizeList).children[0].type;
  return arrow.DataType.isFloat(child) && (child as arrow.Float).precision !== arrow.Precision.HALF;
}

function metadataKind(t: arrow.DataType): MetadataKind | null {
  if (arrow.DataType.isInt(t)) return (t as arrow.Int).bitWidth === 64 ? 'bigint' : 'number';
  if (arrow.DataType.isFloat(t)) return 'number';
  if (arrow.DataType.isUtf8(t) || arrow.DataType.isLargeUtf8(t) || arrow.DataType.isDictionary(t)) return 'string';
  if (arrow.DataType.isBool(t)) return 'bool';
  return null;
}

export function shapeOf(schema: arrow.Schema, rows: number, rowGroups: number[], dim: number, idRequired: boolean): FileShape {
  const names = schema.fields.map((f) => f.name);
  const vectorNames = VECTOR_COLUMNS.filter((n) => names.includes(n));
  if (vectorNames.length === 0) {
    throw new ShapeError('vector_column_missing', `no vector column: name one of ${VECTOR_COLUMNS.join(', ')} (columns: ${names.join(', ')})`);
  }
  if (vectorNames.length > 1) throw new ShapeError('vector_column_ambiguous', `more than one vector column (${vectorNames.join(', ')}): keep exactly one`);
  const vectorColumn = vectorNames[0];
  const vectorType = schema.fields.find((f) => f.name === vectorColumn)!.type;
  if (!isFloatList(vectorType)) {
    throw new ShapeError('vector_column_type', `column ${vectorColumn} is ${String(vectorType)}; it must be a list or fixed-size list of float32 (or float64)`);
  }
  const fixedDim = arrow.DataType.isFixedSizeList(vectorType) ? (vectorType as arrow.FixedSizeList).listSize : null;
  if (fixedDim !== null && fixedDim !== dim) {
    throw new ShapeError('dimension_mismatch', `column ${vectorColumn} holds vectors of dimension ${fixedDim}; the dataset dimension is ${dim}`);
  }
  const idNames = ID_COLUMNS.filter((n) => names.includes(n));
  if (idNames.length > 1) throw new ShapeError('id_column_ambiguous', `more than one id column (${idNames.join(', ')}): keep at most one`);
  const idColumn = idNames[0] ?? null;
  if (idColumn !== null && !arrow.DataType.isInt(schema.fields.find((f) => f.name === idColumn)!.type)) {
    throw new ShapeError('id_column_type', `id column ${idColumn} must hold integers`);
  }
  if (idColumn === null && idRequired) {
    throw new ShapeError('id_column_missing', `no id column (${ID_COLUMNS.join(', ')}): row offsets stand in for ids only in single-file loads`);
  }
  const metadata: FileShape['metadata'] = [];
  for (const f of schema.fields) {
    if (f.name === vectorColumn || f.name === idColumn) continue;
    const kind = metadataKind(f.type);
    if (!kind) throw new ShapeError('metadata_column_type', `metadata column ${f.name} is ${String(f.type)}; metadata must be scalar (string, integer, float, boolean)`);
    metadata.push({ name: f.name, kind });
  }
  return { rows, rowGroups, vectorColumn, fixedDim, idColumn, metadata };
}
