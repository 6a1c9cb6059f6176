/** Names for the generated schema's types (src/api/schema.d.ts comes from openapi.json: `npm run gen:api`). */
import type { components } from "./schema";

type S = components["schemas"];

export type Passage = S["Passage"];
export type Health = S["Health"];
export type QueryRequest = S["QueryRequest"];
export type Turn = S["Turn"];
export type IngestResult = S["IngestResult"];
export type IngestResponse = S["IngestResponse"];
export type AgentEvent = S["AgentEvent"];
export type ToolCallEvent = S["ToolCallEvent"];
export type ToolResultEvent = S["ToolResultEvent"];
export type SourcesEvent = S["SourcesEvent"];
export type TokenEvent = S["TokenEvent"];
export type CitationEvent = S["CitationEvent"];
export type StatementEvent = S["StatementEvent"];
export type AnswerStatement = S["AnswerStatement"];
export type Evidence = S["Evidence"];
export type Verdict = S["Verdict"];
export type RemovedStatement = S["RemovedStatement"];
export type AnswerEvent = S["AnswerEvent"];
export type DoneEvent = S["DoneEvent"];
export type ErrorEvent = S["ErrorEvent"];

export type EventName = AgentEvent["event"];
export const EVENT_NAMES: readonly EventName[] = [
  "tool_call",
  "tool_result",
  "sources",
  "token",
  "citation",
  "statement",
  "answer",
  "done",
  "error",
];

export type DocumentEntry = S["DocumentEntry"];
export type DocumentsResponse = S["DocumentsResponse"];
export type PageText = S["PageText"];

export type LabOverview = S["LabOverview"];
export type LabDataset = S["LabDataset"];
export type LabIndex = S["LabIndex"];
export type LabPoint = S["LabPoint"];
// The live comparison is the knowledge base's kb_ann_compare result, its MCP contract's names unchanged.
export type AnnComparison = S["AnnComparison"];
export type AnnAnswer = S["AnnAnswer"];
export type AnnHit = S["AnnHit"];
export type CompareRequest = S["CompareRequest"];

export type WorkspaceCreated = S["WorkspaceCreated"];
export type WorkspaceInfo = S["WorkspaceInfo"];
export type WorkspaceLimits = S["WorkspaceLimits"];
export type WorkspaceDeleted = S["WorkspaceDeleted"];
