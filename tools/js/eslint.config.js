// ESLint's rules for the project's browser JavaScript: the extension
// (service worker and connect page, ES modules with chrome.*) and the live
// view's page. Formatting is prettier's (.prettierrc.json), not ESLint's.
import js from "@eslint/js";
import globals from "globals";

export default [
  js.configs.recommended,
  {
    files: ["extension/*.js"],
    languageOptions: {
      sourceType: "module",
      globals: { ...globals.browser, ...globals.serviceworker, ...globals.webextensions },
    },
  },
  {
    files: ["web/static/*.js"],
    languageOptions: { sourceType: "module", globals: globals.browser },
  },
  {
    // Scripts the relay installs in pages: one expression each, with the
    // placeholders the relay fills in before it sends them.
    files: ["relay/internal/access/*.js"],
    languageOptions: { sourceType: "script", globals: { ...globals.browser, ON: "readonly", WHY: "readonly" } },
  },
  {
    rules: {
      // An unused argument documents a callback's shape.
      "no-unused-vars": ["error", { args: "none", caughtErrors: "none" }],
      eqeqeq: ["error", "always"],
      "no-var": "error",
      "prefer-const": "error",
    },
  },
];
