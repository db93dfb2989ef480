// Renders each case of a JSON file ([{template, context}]) with @huggingface/jinja and writes [{output} | {error}].
import { Template } from "@huggingface/jinja";
import { readFileSync, writeFileSync } from "node:fs";

const [, , casesFile, outFile] = process.argv;
const cases = JSON.parse(readFileSync(casesFile, "utf8"));
const results = cases.map(({ template, context }) => {
  try {
    return { output: new Template(template).render(context) };
  } catch (e) {
    return { error: String(e && e.message ? e.message : e) };
  }
});
writeFileSync(outFile, JSON.stringify(results));
