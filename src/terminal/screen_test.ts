import assert from "node:assert/strict";
import type { Size } from "./history.ts";
import { type ModelFactory, type ScreenModel, ScreenTracker } from "./screen.ts";
import type { ScreenSnapshot } from "../protocol/mod.ts";

/** A model that parses only when told to, recording what reached it. */
class FakeModel implements ScreenModel {
  readonly log: (string | Size)[] = [];
  readonly unparsed: string[] = [];
  applicationCursor = false;
  faults = 0;
  size: Size;
  readonly #onParsed: (units: number) => void;

  constructor(size: Size, onParsed: (units: number) => void) {
    this.size = size;
    this.#onParsed = onParsed;
  }

  write(data: string): void {
    this.log.push(data);
    this.unparsed.push(data);
  }

  resize(cols: number, rows: number): void {
    this.log.push({ cols, rows });
  }

  /** Parses the oldest `chunks` writes. */
  parse(chunks = Infinity): void {
    for (let i = 0; i < chunks && this.unparsed.length > 0; i++) {
      this.#onParsed(this.unparsed.shift()!.length);
    }
  }

  settled(): Promise<void> {
    this.parse();
    return Promise.resolve();
  }

  snapshot(): ScreenSnapshot {
    const text = this.log.filter((e) => typeof e === "string").join("");
    return {
      ...this.size,
      cursor: { x: 0, y: 0, visible: true },
      alt_screen: false,
      title: "",
      partial: false,
      lines: [text],
    };
  }
}

/** A factory handing out fakes; `gate` (when given) must resolve before a model is delivered. */
function fakes(gate?: Promise<void>): { factory: ModelFactory; models: FakeModel[]; calls: Size[] } {
  const models: FakeModel[] = [];
  const calls: Size[] = [];
  const factory: ModelFactory = async (size, onParsed) => {
    calls.push(size);
    await gate;
    const model = new FakeModel(size, onParsed);
    models.push(model);
    return model;
  };
  return { factory, models, calls };
}

const SIZE = { cols: 80, rows: 24 };

Deno.test("ScreenTracker: output above the high watermark pauses reading, parsing to the low one resumes", async () => {
  const { factory, models } = fakes();
  const pressure: boolean[] = [];
  const tracker = new ScreenTracker({
    size: SIZE,
    eager: true,
    createModel: factory,
    onPressure: (paused) => pressure.push(paused),
    high: 1000,
    low: 200,
  });
  await tracker.snapshot(); // The model exists from here on.
  const model = models[0]!;
  for (let i = 0; i < 12; i++) tracker.output("x".repeat(100)); // 1200 units, none parsed.
  assert.deepEqual(pressure, [true]);
  assert.equal(tracker.pending, 1200);
  model.parse(9); // 300 left: between the marks, still paused.
  assert.deepEqual(pressure, [true]);
  model.parse(1); // 200 left: at the low mark.
  assert.deepEqual(pressure, [true, false]);
  assert.equal(tracker.pending, 200);
});

Deno.test("ScreenTracker: DECCKM comes from the model only once it caught up", async () => {
  const { factory, models } = fakes();
  const tracker = new ScreenTracker({ size: SIZE, eager: true, createModel: factory, onPressure: () => {} });
  assert.equal(tracker.applicationCursor, null); // Still loading.
  await tracker.snapshot();
  const model = models[0]!;
  model.applicationCursor = true;
  assert.equal(tracker.applicationCursor, true);
  tracker.output("\x1b[?1l");
  assert.equal(tracker.applicationCursor, null); // Behind the output: the caller's scanner knows better.
  model.parse();
  model.applicationCursor = false;
  assert.equal(tracker.applicationCursor, false);
  // The emulator failed and was replaced: its modes are the defaults again, the scanner knows better.
  model.faults = 1;
  assert.equal(tracker.applicationCursor, null);
});

Deno.test("ScreenTracker: lazy: nothing is created until asked, then the history replays in order", async () => {
  const { factory, models, calls } = fakes();
  const tracker = new ScreenTracker({ size: SIZE, createModel: factory, onPressure: () => {} });
  tracker.output("one ");
  tracker.resize(100, 30);
  tracker.output("two");
  assert.equal(tracker.active, false);
  assert.deepEqual(calls, []);
  const snap = await tracker.snapshot();
  assert.equal(tracker.active, true);
  assert.deepEqual(calls, [SIZE]); // Created at the size the history starts with.
  assert.deepEqual(models[0]!.log, ["one ", { cols: 100, rows: 30 }, "two"]);
  assert.equal(snap.partial, false);
  tracker.output(" three"); // From now on output goes straight to the model.
  assert.deepEqual(models[0]!.log.at(-1), " three");
});

Deno.test("ScreenTracker: lazy with dropped history: every snapshot of that model is partial", async () => {
  const { factory, models, calls } = fakes();
  const tracker = new ScreenTracker({ size: SIZE, history: 10, createModel: factory, onPressure: () => {} });
  tracker.output("0123456789");
  tracker.resize(40, 10);
  tracker.output("abcdefghij");
  const snap = await tracker.snapshot();
  assert.equal(snap.partial, true);
  assert.deepEqual(calls, [{ cols: 40, rows: 10 }]);
  assert.deepEqual(models[0]!.log, ["abcdefghij"]);
  assert.equal((await tracker.snapshot()).partial, true);
});

Deno.test("ScreenTracker: output while the model loads is queued, counted and delivered in order", async () => {
  let open!: () => void;
  const { factory, models } = fakes(new Promise((resolve) => open = resolve));
  const pressure: boolean[] = [];
  const tracker = new ScreenTracker({
    size: SIZE,
    eager: true,
    createModel: factory,
    onPressure: (paused) => pressure.push(paused),
    high: 10,
    low: 0,
  });
  tracker.output("hello ");
  tracker.resize(20, 5);
  tracker.output("world");
  assert.deepEqual(pressure, [true]); // 11 units queued with no model: reading pauses.
  const snapshot = tracker.snapshot();
  open();
  const snap = await snapshot;
  assert.deepEqual(models[0]!.log, ["hello ", { cols: 20, rows: 5 }, "world"]);
  assert.deepEqual(snap.lines, ["hello world"]);
  assert.deepEqual(pressure, [true, false]);
});

Deno.test("ScreenTracker: a model that cannot be created releases the reader; a retry is partial", async () => {
  let fail = true;
  const pressure: boolean[] = [];
  const tracker = new ScreenTracker({
    size: SIZE,
    eager: true,
    createModel: (size, onParsed) => {
      if (fail) return Promise.reject(new Error("no emulator"));
      return Promise.resolve(new FakeModel(size, onParsed));
    },
    onPressure: (paused) => pressure.push(paused),
    high: 3,
    low: 0,
  });
  tracker.output("lost output");
  await assert.rejects(tracker.snapshot(), /no emulator/);
  assert.deepEqual(pressure, [true, false]);
  assert.equal(tracker.pending, 0);
  fail = false;
  tracker.output("later");
  const snap = await tracker.snapshot();
  assert.equal(snap.partial, true);
  assert.deepEqual(snap.lines, ["later"]);
});
