/**
 * The client's request and answer types: the TypeBox schemas the service checks bodies with and
 * documents answers by (imported as types only: no server code runs in a client).
 */
import type { Static } from '@sinclair/typebox';
import type * as A from '../answer/requests.js';
import type * as C from '../catalog/datasets/requests.js';
import type * as D from '../control-plane/schemas/datasets.js';
import type * as J from '../control-plane/schemas/jobs.js';
import type * as I from '../ingest/requests.js';
import type * as R from '../retrieval/requests.js';

export type CreateDataset = C.CreateDataset;
export type Dataset = Static<typeof D.Dataset>;
export type DatasetList = Static<typeof D.DatasetList>;
export type Stats = Static<typeof D.Stats>;
export type Sla = Static<typeof D.SlaAnswer>;
export type SlaSettings = Static<typeof D.Sla>;
export type VectorIn = R.VectorIn;
export type InsertAnswer = Static<typeof R.InsertResponse>;
export type DeleteVectors = R.DeleteVectors;
export type DeleteAnswer = Static<typeof R.DeleteResponse>;
export type SearchRequest = R.SearchRequest;
export type SearchAnswer = Static<typeof R.SearchResponse>;
export type SourceCreate = I.SourceCreate;
export type Source = Static<typeof I.Source>;
export type SourceUploadAnswer = Static<typeof I.SourceUploadInitAnswer>;
export type Job = Static<typeof J.Job>;
export type Question = A.IntelligenceQuery;
export type Answer = Static<typeof A.IntelligenceAnswer>;
export type RunRecord = Static<typeof A.RunRecord>;
export type StreamChunk = Static<typeof A.StreamChunk> & { seq: number };
export type StreamToken = Static<typeof A.StreamTokenAnswer>;
export type ErrorBody = { error: string; message: string; request_id?: string; [field: string]: unknown };
