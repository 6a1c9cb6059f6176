/** The app: the router's pages inside the shell (src/router.tsx, src/shell/Shell.tsx). */
import { RouterProvider } from "@tanstack/react-router";
import { createAppRouter } from "./router";

const router = createAppRouter();

export function App() {
  return <RouterProvider router={router} />;
}
