import { act, cleanup, renderHook } from "@testing-library/react";
import { afterEach, describe, expect, it, vi } from "vitest";
import { UNSUPPORTED, useUpload } from "./Upload";

afterEach(() => {
  cleanup();
  vi.unstubAllGlobals();
});

describe("an upload", () => {
  it("refuses here, with the reason, what the server would refuse, and sends nothing for it", async () => {
    const sent = vi.fn();
    vi.stubGlobal("XMLHttpRequest", sent);
    const finished = vi.fn();
    const { result } = renderHook(() => useUpload(finished));
    const files = [new File(["MZ"], "setup.exe"), new File([new Uint8Array(10 * 1024 * 1024 + 1)], "scan.pdf")];
    await act(() => result.current.upload(files));
    expect(sent).not.toHaveBeenCalled();
    expect(finished).toHaveBeenCalledWith([
      { id: "setup.exe", name: "setup.exe", status: "refused", reason: UNSUPPORTED },
      { id: "scan.pdf", name: "scan.pdf", status: "refused", reason: "larger than the 10 MB limit" },
    ]);
    expect(result.current.run).toMatchObject({ state: "done", progress: 1, names: ["setup.exe", "scan.pdf"] });
  });
});
