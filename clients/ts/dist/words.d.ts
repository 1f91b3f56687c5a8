/** Splits `text` into words (throws `E_AGENT_START` on an unterminated quote). */
export declare function shellWords(text: string): string[];
