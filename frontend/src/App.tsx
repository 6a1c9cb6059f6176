/** The app: the router's pages inside the shell (src/router.tsx, src/shell/Shell.tsx). */
import { RouterProvider } from "@tanstack/react-router";
import { router } from "./router";

export function App() {
  return <RouterProvider router={router} />;
}
