import { cleanup, render, screen } from "@testing-library/react";
import { afterEach, describe, expect, it } from "vitest";
import { PassageViewer } from "@/features/ask/PassageViewer";
import { passage } from "@/test/fixtures";
import { WorkspaceNote } from "./Workspace";

afterEach(cleanup);

describe("the workspace on the page", () => {
  const held = {
    id: "w1",
    token: "t1",
    expiresAt: new Date().setHours(14, 5, 0, 0),
    limits: { documents: 20, questions: 100, file_mb: 10 },
  };

  it("says when the workspace is deleted, and what it may hold", () => {
    render(<WorkspaceNote state={{ on: true, held, lost: false }} asked={3} />);
    expect(screen.getByTestId("workspace-expiry").textContent).toMatch(/^Private workspace — deleted at (14|02):05/);
    expect(screen.getByTestId("workspace-note").textContent).toContain("Up to 20 documents, 10 MB a file, 100 questions (3 asked)");
  });

  it("says nothing about workspaces when the agent has none", () => {
    render(<WorkspaceNote state={{ on: false, held: null, lost: false }} asked={null} />);
    expect(screen.queryByTestId("workspace-note")).toBeNull();
  });

  it("offers no page to open for a passage whose workspace was deleted", () => {
    HTMLDialogElement.prototype.showModal ??= function (this: HTMLDialogElement) {
      this.open = true; // jsdom has no modal dialogs
    };
    render(<PassageViewer passage={passage(1)} gone onClose={() => undefined} />);
    expect(screen.getByTestId("passage-text").textContent).toContain("descale every two months");
    expect(screen.getByTestId("passage-gone").textContent).toMatch(/deleted with the workspace/);
    expect(screen.queryByRole("button", { name: /Show the whole page/ })).toBeNull();
  });
});
