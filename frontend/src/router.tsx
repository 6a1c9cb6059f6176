/**
 * The pages and their addresses. Hash history keeps them in the fragment (#/ Ask, #/lab the Index
 * Lab), so any static server can serve the build and links written before the router still open the
 * same page; any other address goes to Ask.
 */
import { createHashHistory, createRootRoute, createRoute, createRouter, Navigate } from "@tanstack/react-router";
import { AskPage } from "@/features/ask/AskPage";
import { LabPage } from "@/features/lab/LabPage";
import { Shell } from "@/shell/Shell";

const root = createRootRoute({ component: Shell, notFoundComponent: () => <Navigate to="/" replace /> });
const ask = createRoute({ getParentRoute: () => root, path: "/", component: AskPage });
const lab = createRoute({ getParentRoute: () => root, path: "/lab", component: LabPage });

const routeTree = root.addChildren([ask, lab]);

/** A router over the page's hash; one per page (App makes it), or one per test. */
export function createAppRouter() {
  return createRouter({ routeTree, history: createHashHistory() });
}

declare module "@tanstack/react-router" {
  interface Register {
    router: ReturnType<typeof createAppRouter>;
  }
}
