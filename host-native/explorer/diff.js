// A line diff by longest common subsequence: the lines both versions share
// stay, the others are removed or added. Common head and tail lines are cut
// first, so the quadratic table covers only the changed middle.

/**
 * Diffs two texts by line. Returns [{op: " " | "-" | "+", text, a, b}], where
 * `a`/`b` are 1-based line numbers in the old/new text (null where absent).
 */
export function diffLines(oldText, newText) {
  const a = String(oldText).split("\n");
  const b = String(newText).split("\n");
  let start = 0;
  while (start < a.length && start < b.length && a[start] === b[start]) start++;
  let endA = a.length;
  let endB = b.length;
  while (endA > start && endB > start && a[endA - 1] === b[endB - 1]) {
    endA--;
    endB--;
  }
  const n = endA - start;
  const m = endB - start;
  if (n * m > 16_000_000) throw new Error(`the versions differ in ${n} x ${m} lines: too large to diff here`);
  // lcs[i][j]: LCS length of a[start+i..endA] and b[start+j..endB].
  const width = m + 1;
  const lcs = new Uint32Array((n + 1) * width);
  for (let i = n - 1; i >= 0; i--) {
    for (let j = m - 1; j >= 0; j--) {
      lcs[i * width + j] = a[start + i] === b[start + j] ? lcs[(i + 1) * width + j + 1] + 1 : Math.max(lcs[(i + 1) * width + j], lcs[i * width + j + 1]);
    }
  }
  const out = [];
  for (let k = 0; k < start; k++) out.push({ op: " ", text: a[k], a: k + 1, b: k + 1 });
  let i = 0;
  let j = 0;
  while (i < n || j < m) {
    if (i < n && j < m && a[start + i] === b[start + j]) {
      out.push({ op: " ", text: a[start + i], a: start + i + 1, b: start + j + 1 });
      i++;
      j++;
    } else if (i < n && (j === m || lcs[(i + 1) * width + j] >= lcs[i * width + j + 1])) {
      out.push({ op: "-", text: a[start + i], a: start + i + 1, b: null });
      i++;
    } else {
      out.push({ op: "+", text: b[start + j], a: null, b: start + j + 1 });
      j++;
    }
  }
  for (let k = 0; k < a.length - endA; k++) out.push({ op: " ", text: a[endA + k], a: endA + k + 1, b: endB + k + 1 });
  return out;
}
