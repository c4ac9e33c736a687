// Runs client.ts against the service at argv[2] and prints what it said, as JSON.
import { play } from "./client.js";

declare const process: { argv: string[]; exitCode?: number };

play(process.argv[2] ?? "http://127.0.0.1:8080").then(
  (said) => console.log(JSON.stringify(said)),
  (error: unknown) => {
    console.error(String(error));
    process.exitCode = 1;
  },
);
