import { describe, expect, it } from "vitest";
import { type Conversation, newConversation, startTurn } from "@/features/ask/conversation";
import { ConversationStore, type KeyValue, MAX_CONVERSATIONS, StorageFull } from "@/features/ask/storage";

/** localStorage with a byte quota that throws the browser's QuotaExceededError. */
class QuotaStorage implements KeyValue {
  readonly items = new Map<string, string>();
  constructor(private readonly quota = Infinity) {}
  getItem(key: string) {
    return this.items.get(key) ?? null;
  }
  removeItem(key: string) {
    this.items.delete(key);
  }
  setItem(key: string, value: string) {
    let used = key.length + value.length;
    for (const [k, v] of this.items) if (k !== key) used += k.length + v.length;
    if (used > this.quota) throw new DOMException("quota", "QuotaExceededError");
    this.items.set(key, value);
  }
}

function conversation(n: number, size = 10): Conversation {
  return { ...startTurn(newConversation(n), `question ${n} ${"x".repeat(size)}`, n), id: `c${n}`, updatedAt: n };
}

describe("ConversationStore", () => {
  it("round-trips, renames and deletes", () => {
    const store = new ConversationStore(new QuotaStorage());
    store.save(conversation(1));
    expect(store.load("c1")?.turns[0]?.question).toContain("question 1");
    store.rename("c1", "Descaling");
    expect(store.list()[0]?.title).toBe("Descaling");
    store.remove("c1");
    expect(store.list()).toEqual([]);
    expect(store.load("c1")).toBeNull();
  });

  it("keeps at most 30, evicting the oldest", () => {
    const kv = new QuotaStorage();
    const store = new ConversationStore(kv);
    const evicted: string[] = [];
    for (let n = 1; n <= MAX_CONVERSATIONS + 2; n++) evicted.push(...store.save(conversation(n)));
    expect(evicted).toEqual(["c1", "c2"]);
    expect(store.list()).toHaveLength(MAX_CONVERSATIONS);
    expect(store.list()[0]?.id).toBe(`c${MAX_CONVERSATIONS + 2}`);
    expect(store.load("c1")).toBeNull();
  });

  it("evicts the oldest conversations when the quota complains, then saves", () => {
    const kv = new QuotaStorage(6000);
    const store = new ConversationStore(kv);
    for (let n = 1; n <= 4; n++) store.save(conversation(n, 1000));
    const evicted = store.save(conversation(5, 2500));
    expect(evicted[0]).toBe("c1");
    expect(store.load("c5")).not.toBeNull();
    expect(store.list().map((m) => m.id)).not.toContain("c1");
    expect(store.list().every((m) => store.load(m.id) !== null)).toBe(true);
  });

  it("says so when one conversation alone is larger than the quota", () => {
    const store = new ConversationStore(new QuotaStorage(500));
    expect(() => store.save(conversation(1, 2000))).toThrow(StorageFull);
  });
});
