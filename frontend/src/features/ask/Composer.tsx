import { ArrowUp, Square } from "lucide-react";
import { type RefObject, useState } from "react";
import { Button } from "@/components/ui/button";
import { Textarea } from "@/components/ui/input";

interface ComposerProps {
  onAsk: (question: string) => void;
  onStop: () => void;
  streaming: boolean;
  inputRef: RefObject<HTMLTextAreaElement | null>;
  followUp: boolean;
}

const MAX = 2000; // QueryRequest.question max_length

export function Composer({ onAsk, onStop, streaming, inputRef, followUp }: ComposerProps) {
  const [value, setValue] = useState("");
  const submit = () => {
    const question = value.trim();
    if (!question || streaming) return;
    onAsk(question);
    setValue("");
  };
  return (
    <form
      className="flex items-end gap-2"
      onSubmit={(e) => {
        e.preventDefault();
        submit();
      }}
    >
      <label htmlFor="question" className="sr-only">
        {followUp ? "Ask a follow-up question" : "Ask a question about your documents"}
      </label>
      <Textarea
        id="question"
        ref={inputRef}
        rows={2}
        maxLength={MAX}
        value={value}
        placeholder={followUp ? "Ask a follow-up…" : "Ask a question about your documents…"}
        onChange={(e) => setValue(e.target.value)}
        onKeyDown={(e) => {
          if (e.key === "Enter" && !e.shiftKey && !e.nativeEvent.isComposing) {
            e.preventDefault();
            submit();
          }
        }}
        aria-describedby="composer-hint"
      />
      {streaming ? (
        <Button variant="outline" size="icon" onClick={onStop} aria-label="Stop the answer">
          <Square />
        </Button>
      ) : (
        <Button type="submit" size="icon" disabled={!value.trim()} aria-label="Ask">
          <ArrowUp />
        </Button>
      )}
      <span id="composer-hint" className="sr-only">
        Enter sends, Shift+Enter starts a new line.
      </span>
    </form>
  );
}
