// The map step's input: a long transcript cut into windows at utterance boundaries, each at most `maxChars`
// (an utterance longer than that is a window of its own, cut to the limit).

export function splitWindows(lines: readonly string[], maxChars: number): string[] {
  const windows: string[] = [];
  let current: string[] = [];
  let size = 0;
  for (const raw of lines) {
    const line = raw.length > maxChars ? raw.slice(0, maxChars) : raw;
    if (size + line.length + 1 > maxChars && current.length > 0) {
      windows.push(current.join("\n"));
      current = [];
      size = 0;
    }
    current.push(line);
    size += line.length + 1;
  }
  if (current.length > 0) windows.push(current.join("\n"));
  return windows;
}
