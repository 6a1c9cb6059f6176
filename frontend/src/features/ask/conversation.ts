/**
 * A conversation as the browser keeps it: turns, and the numbered passages every turn can cite.
 * Labels are stable across turns because the client sends the passages it holds with each question;
 * the server numbers new passages after them and each `sources` frame is the complete list.
 */
import type { AgentEvent, AnswerEvent, AnswerStatement, Passage, QueryRequest, ToolCallEvent, ToolResultEvent } from "@/api/types";
import { newId } from "@/lib/utils";

export interface TraceStep {
  call: ToolCallEvent;
  result?: ToolResultEvent;
}

export type TurnStatus = "streaming" | "done" | "error" | "stopped";

export interface ChatTurn {
  id: string;
  question: string;
  /** The streamed text; replaced by the final answer's text once it arrives. */
  text: string;
  trace: TraceStep[];
  /** Validity of each label as the server judged it while the answer streamed. */
  citations: Record<number, boolean>;
  /** The answer's statements with their evidence, as `statement` frames bring them (absent in older saves). */
  statements?: AnswerStatement[];
  answer?: AnswerEvent;
  status: TurnStatus;
  error?: string;
  elapsedMs?: number;
  requestId?: string;
}

export interface Conversation {
  id: string;
  title: string;
  createdAt: number;
  updatedAt: number;
  turns: ChatTurn[];
  passages: Passage[];
  /** The workspace its latest sources came from (this browser's name for it); absent without workspaces. */
  workspace?: string;
}

export const MAX_HISTORY = 40; // QueryRequest.history max_length
export const MAX_PASSAGES = 200; // QueryRequest.passages max_length
const MAX_TURN_CHARS = 20_000;

export function newConversation(now = Date.now()): Conversation {
  return { id: newId(), title: "New conversation", createdAt: now, updatedAt: now, turns: [], passages: [] };
}

export function titleFrom(question: string): string {
  const line = question.replace(/\s+/g, " ").trim();
  return line.length > 60 ? `${line.slice(0, 57)}…` : line || "New conversation";
}

/** Held passages updated by a `sources` frame: the frame wins for a label it carries, none are lost. */
export function mergePassages(held: Passage[], incoming: Passage[]): Passage[] {
  const byLabel = new Map<number, Passage>();
  for (const p of held) byLabel.set(p.label, p);
  for (const p of incoming) byLabel.set(p.label, p);
  return [...byLabel.values()].sort((a, b) => a.label - b.label);
}

/** The request for a follow-up: earlier finished turns as history, and every passage held. */
export function buildRequest(conversation: Conversation, question: string): QueryRequest {
  const history: QueryRequest["history"] = [];
  for (const turn of conversation.turns) {
    if (turn.status !== "done" || !turn.text) continue;
    history.push({ role: "user", text: turn.question.slice(0, MAX_TURN_CHARS) });
    history.push({ role: "assistant", text: turn.text.slice(0, MAX_TURN_CHARS) });
  }
  // Keep the newest passages when over the cap; numbering resumes after the highest label sent.
  const passages = conversation.passages.slice(-MAX_PASSAGES);
  return { question, history: history.slice(-MAX_HISTORY), passages };
}

export function startTurn(conversation: Conversation, question: string, now = Date.now()): Conversation {
  const turn: ChatTurn = { id: newId(), question, text: "", trace: [], citations: {}, status: "streaming" };
  return {
    ...conversation,
    title: conversation.turns.length === 0 ? titleFrom(question) : conversation.title,
    updatedAt: now,
    turns: [...conversation.turns, turn],
  };
}

function updateLast(conversation: Conversation, update: (turn: ChatTurn) => ChatTurn): Conversation {
  const last = conversation.turns[conversation.turns.length - 1];
  if (!last) return conversation;
  return { ...conversation, turns: [...conversation.turns.slice(0, -1), update(last)] };
}

/** Fold one stream event into the conversation's last turn. */
export function applyEvent(conversation: Conversation, event: AgentEvent): Conversation {
  switch (event.event) {
    case "sources":
      return { ...conversation, passages: mergePassages(conversation.passages, event.passages) };
    case "tool_call":
      return updateLast(conversation, (t) => ({ ...t, trace: [...t.trace, { call: event }] }));
    case "tool_result":
      return updateLast(conversation, (t) => {
        const trace = t.trace.map((step) => (step.call.id === event.id && !step.result ? { ...step, result: event } : step));
        return { ...t, trace };
      });
    case "token":
      return updateLast(conversation, (t) => ({ ...t, text: t.text + event.text }));
    case "citation":
      return updateLast(conversation, (t) => ({ ...t, citations: { ...t.citations, [event.label]: event.valid } }));
    case "statement":
      return updateLast(conversation, (t) => {
        const statements = [...(t.statements ?? [])];
        statements[event.index] = event.statement;
        return { ...t, statements: Array.from(statements, (s) => s ?? { text: "", evidence: [], supported: true }) };
      });
    case "answer":
      // The answer's list is the final word; one without statements keeps what the stream brought.
      return updateLast(conversation, (t) => ({
        ...t,
        text: event.text,
        answer: event,
        statements: event.statements?.length ? event.statements : t.statements,
      }));
    case "error":
      return updateLast(conversation, (t) => ({ ...t, status: "error", error: event.message }));
    case "done":
      return {
        ...updateLast(conversation, (t) => ({
          ...t,
          status: t.status === "streaming" ? (t.answer ? "done" : "error") : t.status,
          error: t.status === "streaming" && !t.answer ? "the stream ended without an answer" : t.error,
          elapsedMs: event.elapsed_ms,
          requestId: event.request_id,
        })),
        updatedAt: Date.now(),
      };
    default:
      return conversation;
  }
}

/** Whether label `n` of this turn has a passage behind it. */
export function labelIsValid(turn: ChatTurn, passages: Passage[], label: number): boolean {
  if (turn.answer?.citations.dangling.includes(label)) return false;
  if (turn.citations[label] === false) return false;
  return passages.some((p) => p.label === label);
}

/** Where on its document a passage is, as a citation writes it ("p. iv", "slide 7") or a screen reader says it
 * ("page iv"); null for a passage without pages. */
export function passagePlace(
  p: Pick<Passage, "page" | "page_label" | "page_unit">,
  style: "written" | "spoken" = "written",
): string | null {
  if (!p.page_label && !p.page) return null;
  const unit = p.page_unit === "slide" ? "slide" : style === "spoken" ? "page" : "p.";
  return `${unit} ${p.page_label ?? p.page}`;
}

export function passageCitation(p: Passage): string {
  return [p.title, passagePlace(p), p.section].filter(Boolean).join(", ");
}

/** The whole conversation as Markdown: questions, answers, and the passages they cite. */
export function toMarkdown(conversation: Conversation): string {
  const out = [`# ${conversation.title}`, "", `_Exported from Sextant on ${new Date().toISOString().slice(0, 10)}._`, ""];
  for (const turn of conversation.turns) {
    out.push(`## ${turn.question.replace(/\n+/g, " ")}`, "");
    out.push(turn.text || (turn.error ? `_(failed: ${turn.error})_` : "_(no answer)_"), "");
    if (turn.answer?.mode === "excerpts") out.push(`_Excerpts, not a written answer: ${turn.answer.reason}_`, "");
  }
  if (conversation.passages.length) {
    out.push("## Sources", "");
    for (const p of conversation.passages) {
      const where = p.tier === "web" && p.uri ? `${p.title} <${p.uri}>` : passageCitation(p);
      out.push(`[${p.label}] ${where}`, "");
    }
  }
  return `${out
    .join("\n")
    .replace(/\n{3,}/g, "\n\n")
    .trimEnd()}\n`;
}

/** A conversation saved mid-answer (the page was closed) comes back with that turn marked stopped. */
export function settle(conversation: Conversation): Conversation {
  if (!conversation.turns.some((t) => t.status === "streaming")) return conversation;
  return {
    ...conversation,
    turns: conversation.turns.map((t) => (t.status === "streaming" ? { ...t, status: "stopped" as const } : t)),
  };
}

export function stopLast(conversation: Conversation): Conversation {
  const last = conversation.turns[conversation.turns.length - 1];
  if (last?.status !== "streaming") return conversation;
  return { ...conversation, turns: [...conversation.turns.slice(0, -1), { ...last, status: "stopped" }] };
}
