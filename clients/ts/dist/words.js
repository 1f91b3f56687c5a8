/**
 * Shell words: how `$SPECTER_COMMAND` (e.g. `deno run -A /opt/specter/main.ts agent`) becomes an argv. Single and
 * double quotes and backslashes work as in a POSIX shell; nothing is expanded.
 *
 * @module
 */
import { SpecterError } from "./errors.js";
/** Splits `text` into words (throws `E_AGENT_START` on an unterminated quote). */
export function shellWords(text) {
    const words = [];
    let word = "";
    let inWord = false;
    for (let i = 0; i < text.length; i++) {
        const c = text[i];
        if (c === "'") {
            const end = text.indexOf("'", i + 1);
            if (end < 0) {
                throw new SpecterError("E_AGENT_START", `Unterminated ' in "${text}"`);
            }
            word += text.slice(i + 1, end);
            inWord = true;
            i = end;
        }
        else if (c === '"') {
            let j = i + 1;
            for (; j < text.length && text[j] !== '"'; j++) {
                if (text[j] === "\\" && j + 1 < text.length &&
                    '"\\$`'.includes(text[j + 1]))
                    j++;
                word += text[j];
            }
            if (j >= text.length) {
                throw new SpecterError("E_AGENT_START", `Unterminated " in "${text}"`);
            }
            inWord = true;
            i = j;
        }
        else if (c === "\\" && i + 1 < text.length) {
            word += text[++i];
            inWord = true;
        }
        else if (c === " " || c === "\t" || c === "\n") {
            if (inWord)
                words.push(word);
            word = "";
            inWord = false;
        }
        else {
            word += c;
            inWord = true;
        }
    }
    if (inWord)
        words.push(word);
    return words;
}
