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
export type SourceUploadComplete = Static<typeof I.SourceUploadCompleteAnswer>;
export type SourceList = Static<typeof I.SourceList>;
export type SourceTypes = Static<typeof I.SourceTypes>;
export type SourceValidation = Static<typeof I.Validation>;
export type SourceReferences = Static<typeof I.References>;
export type ScheduleCreate = I.ScheduleCreate;
export type Schedule = Static<typeof I.Schedule>;
export type ScheduleList = Static<typeof I.ScheduleList>;
/** A document of a dataset's catalog (GET /datasets/{id}/documents). */
export type CatalogDocument = Static<typeof I.Document>;
export type DocumentList = Static<typeof I.DocumentList>;
export type Job = Static<typeof J.Job>;
export type JobList = Static<typeof J.JobList>;
export type JobFile = Static<typeof J.JobFile>;
export type JobFiles = Static<typeof J.JobFiles>;
/** GET /ingestion/jobs/{id}/statistics answers these, or null until a file has finished. */
export type JobStatistics = NonNullable<Static<typeof J.JobStatistics>>;
export type Question = A.IntelligenceQuery;
export type Answer = Static<typeof A.IntelligenceAnswer>;
export type RunRecord = Static<typeof A.RunRecord>;
export type StreamChunk = Static<typeof A.StreamChunk> & { seq: number };
export type StreamToken = Static<typeof A.StreamTokenAnswer>;
export type TraceEvent = Static<typeof A.TraceEvent>;
/** A chat session (GET /intelligence/sessions/{id}), its messages and the trace of the runs asked in it. */
export type ChatSession = Static<typeof A.Session>;
export type ChatSessionList = Static<typeof A.SessionList>;
export type ChatMessage = Static<typeof A.Message>;
export type ChatMessageList = Static<typeof A.MessageList>;
export type ChatSessionEvents = Static<typeof A.SessionEvents>;
export type ErrorBody = { error: string; message: string; request_id?: string; [field: string]: unknown };
