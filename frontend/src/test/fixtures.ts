import type { Passage } from "@/api/types";

export function passage(label: number, extra: Partial<Passage> = {}): Passage {
  return {
    label,
    tier: "kb",
    chunk_id: `doc~${label}`,
    document_id: "espresso-maintenance",
    title: "Caring for Your Home Espresso Machine",
    source: "espresso-maintenance.pdf",
    page: label + 2,
    page_label: String(label),
    page_unit: "page",
    section: "Chapter 3. Descaling",
    text: `Passage ${label}: descale every two months above 120 ppm.`,
    uri: `kb://documents/espresso-maintenance/pages/${label + 2}`,
    ...extra,
  };
}

export const answerEvent = (text: string, dangling: number[] = []) => ({
  event: "answer" as const,
  text,
  mode: "model" as const,
  model: "scripted",
  reason: "",
  citations: { claims: 1, claims_cited: 1, labels_total: 1, labels_valid: 1, dangling },
  verification: {
    checked: false,
    statements: 0,
    unsupported: [],
    action: "off" as const,
    note: "",
    answer_checks: 0,
    not_answering: [] as string[],
  },
  abstained: false,
  usage: { input_tokens: 0, output_tokens: 0, thinking_tokens: 0, cost_usd: 0 },
  turns: 1,
});
