"""The one normal form of transcripts and the error rates over it, for every test and benchmark.

Normal form of a text in language `lang` (`words`), in this order:

1. Unicode NFKC: full-width letters and digits, compatibility forms and composed kana read alike.
2. Speaker tags of the shared references (`[spk1]`, `[spkA]`) removed.
3. Lower case (Unicode default lower-casing, as JavaScript's `toLowerCase`; not full case folding, which JavaScript
   lacks, so both sides agree).
4. Numbers in one form, the spoken one: for ko, ja and en a number written in digits (`1,200`, `3.5`, `20`; en
   ordinals `21st`) is replaced by its reading (ko Sino-Korean `천이백`, ja `千二百`, en `one thousand two hundred`),
   and `%` by the word (`퍼센트`, `パーセント`, `percent`). The model writes a number either way and so do the
   references ("20일" / "이십 일", "105%" / "105 percent"); reading digits is the direction without guesswork (words
   that merely contain number syllables, 이상 or 사이, are never touched). A digit run with a leading zero (`010`) or
   over 15 digits is read digit by digit. Not reconciled: Korean native numbers (`다섯 권` against `5권`, whose
   reading depends on the counter) and English years read in pairs (`twenty twenty-one`). Other languages keep
   their digits.
5. Apostrophes removed (`don't` is one word), then every character that is not a letter, mark or digit (Unicode
   categories L, M, N) is a word break: punctuation, symbols and spaces leave the characters.

`chars` is the words joined: the CER's units, so spacing (which Korean writes loosely and Japanese not at all) and
punctuation never count. A benchmark sums edits and reference units over its files (corpus level), so a long file
weighs more than a short one.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Iterator, Sequence

SPEAKER_TAG = re.compile(r"\[spk\w*\]", re.IGNORECASE)
NUMBER = re.compile(r"[0-9]+(?:,[0-9]{3})*(?:\.[0-9]+)?")
EN_ORDINAL = re.compile(r"([0-9]+)(st|nd|rd|th)\b")
PERCENT = {"ko": "퍼센트", "ja": "パーセント", "en": "percent"}
POINT = {"ko": "점", "ja": "点", "en": "point"}

# ------------------------------------------------------------------------------------------------ number readings
_KO_DIGITS = ["영", "일", "이", "삼", "사", "오", "육", "칠", "팔", "구"]
_JA_DIGITS = ["零", "一", "二", "三", "四", "五", "六", "七", "八", "九"]
_EN_ONES = ["zero", "one", "two", "three", "four", "five", "six", "seven", "eight", "nine", "ten", "eleven", "twelve",
            "thirteen", "fourteen", "fifteen", "sixteen", "seventeen", "eighteen", "nineteen"]  # fmt: skip
_EN_TENS = ["", "", "twenty", "thirty", "forty", "fifty", "sixty", "seventy", "eighty", "ninety"]
_EN_ORDINAL = {"one": "first", "two": "second", "three": "third", "five": "fifth", "eight": "eighth",
               "nine": "ninth", "twelve": "twelfth"}  # fmt: skip


def _myriads(v: int, digits: list[str], small: list[str], big: list[str], one_before_man: bool) -> str:
    """Sino-Korean and Japanese readings: groups of 10^4 (만/万, 억/億, 조/兆), each read with 천/千, 백/百, 십/十;
    a 1 before 천, 백, 십 is not said, before 만 only in Japanese (一万, 만)."""

    def section(n: int) -> str:
        out = ""
        for unit, size in zip(small, (1000, 100, 10), strict=True):
            q, n = divmod(n, size)
            if q:
                out += ("" if q == 1 else digits[q]) + unit
        return out + (digits[n] if n else "")

    if v == 0:
        return digits[0]
    out, rest = "", v
    for unit, size in zip(big, (10**12, 10**8, 10**4), strict=True):
        q, rest = divmod(rest, size)
        if q:
            out += ("" if q == 1 and size == 10**4 and not one_before_man else section(q)) + unit
    return out + section(rest)


def _english(v: int) -> str:
    if v < 20:
        return _EN_ONES[v]
    if v < 100:
        return _EN_TENS[v // 10] + (f" {_EN_ONES[v % 10]}" if v % 10 else "")
    if v < 1000:
        return f"{_EN_ONES[v // 100]} hundred" + (f" {_english(v % 100)}" if v % 100 else "")
    for word, size in (("trillion", 10**12), ("billion", 10**9), ("million", 10**6), ("thousand", 10**3)):
        if v >= size:
            return f"{_english(v // size)} {word}" + (f" {_english(v % size)}" if v % size else "")
    raise AssertionError(v)


def _digit_words(lang: str) -> list[str]:
    return {"ko": _KO_DIGITS, "ja": _JA_DIGITS}.get(lang, _EN_ONES[:10])


def read_integer(digits: str, lang: str) -> str:
    """The reading of a run of ASCII digits in `lang` (ko, ja or en)."""
    if (len(digits) > 1 and digits[0] == "0") or len(digits) > 15:
        return " ".join(_digit_words(lang)[int(d)] for d in digits)
    v = int(digits)
    if lang == "ko":
        return _myriads(v, _KO_DIGITS, ["천", "백", "십"], ["조", "억", "만"], one_before_man=False)
    if lang == "ja":
        return _myriads(v, _JA_DIGITS, ["千", "百", "十"], ["兆", "億", "万"], one_before_man=True)
    return _english(v)


def read_number(written: str, lang: str) -> str:
    """`1,200` -> `천이백` (ko); `3.5` -> `three point five` (en)."""
    whole, _, frac = written.replace(",", "").partition(".")
    out = read_integer(whole, lang)
    if frac:
        out += f" {POINT[lang]} " + " ".join(_digit_words(lang)[int(d)] for d in frac)
    return out


def _ordinal(m: re.Match[str]) -> str:
    *head, last = read_integer(m.group(1), "en").split(" ")
    if last in _EN_ORDINAL:
        last = _EN_ORDINAL[last]
    elif last.endswith("y"):
        last = last[:-1] + "ieth"
    else:
        last += "th"
    return " " + " ".join([*head, last]) + " "


# ------------------------------------------------------------------------------------------------ normal form
def words(text: str, lang: str = "") -> list[str]:
    """The normal form's words (module docstring); `lang` "" (or one without readings): digits kept."""
    text = SPEAKER_TAG.sub(" ", unicodedata.normalize("NFKC", text)).lower()
    if lang in PERCENT:
        if lang == "en":
            text = EN_ORDINAL.sub(_ordinal, text)
        text = NUMBER.sub(lambda m: f" {read_number(m.group(0), lang)} ", text)
        text = text.replace("%", f" {PERCENT[lang]} ")
    text = text.replace("'", "").replace("\u2019", "")
    return "".join(c if unicodedata.category(c)[0] in "LMN" else " " for c in text).split()


def chars(text: str, lang: str = "") -> str:
    """The normal form's characters: the words joined (no spaces, no punctuation)."""
    return "".join(words(text, lang))


# ------------------------------------------------------------------------------------------------ edit distance
def _rows(a: Sequence[str], b: Sequence[str]) -> Iterator[list[int]]:
    """The rows of the edit-distance table of a (rows) against b (columns): row i is D[i][0..len(b)], D[i][j] the
    insertions, deletions and substitutions that turn a[:i] into b[:j]. The one edit distance of the tests and
    benchmarks on the Python side."""
    row = list(range(len(b) + 1))
    yield row
    for i, x in enumerate(a, 1):
        cur = [i]
        for j, y in enumerate(b, 1):
            cur.append(min(row[j] + 1, cur[j - 1] + 1, row[j - 1] + (x != y)))
        yield cur
        row = cur


def edit_distance(a: Sequence[str], b: Sequence[str]) -> int:
    *_, last = _rows(a, b)
    return last[-1]


def cer(hyp: str, ref: str, lang: str = "") -> float:
    """Normalized character error rate: edits over the reference's characters."""
    r = chars(ref, lang)
    return edit_distance(chars(hyp, lang), r) / max(1, len(r))


def wer(hyp: str, ref: str, lang: str = "") -> float:
    """Word error rate over the normal form's words."""
    r = words(ref, lang)
    return edit_distance(words(hyp, lang), r) / max(1, len(r))


# ------------------------------------------------------------------------------------------------ text beyond the reference
def _table(a: str, b: str) -> list[list[int]]:
    return list(_rows(a, b))


def _prefix_distances(hyp: str, ref: str) -> list[int]:
    """D[i][len(ref)] for every prefix hyp[:i]: the edit distance of each prefix of hyp to the whole of ref."""
    return [row[-1] for row in _rows(hyp, ref)]


def _extra_tail(h: str, r: str) -> int:
    col = _prefix_distances(h, r)
    best = min(col)
    return len(h) - max(i for i, d in enumerate(col) if d == best)


def extra_tail(hyp: str, ref: str, lang: str = "") -> int:
    """Characters of hyp after the prefix of it that lines up best with the whole reference (ties: the longer
    prefix, so a last word spelled another way counts as that word, not as extra text)."""
    return _extra_tail(chars(hyp, lang), chars(ref, lang))


def missing_tail(hyp: str, ref: str, lang: str = "") -> int:
    """Characters at the end of the reference that no part of hyp covers."""
    return _extra_tail(chars(ref, lang), chars(hyp, lang))


def missing_head(hyp: str, ref: str, lang: str = "") -> int:
    """Characters at the start of the reference that no part of hyp covers."""
    return _extra_tail(chars(ref, lang)[::-1], chars(hyp, lang)[::-1])


def _trailing(ref: str, hyp: str, d: list[list[int]]) -> int:
    """Hyp characters after the last one aligned to a reference character, on an optimal alignment that puts
    insertions as late as it can (so an invented tail is counted as inserted, not as substitutions)."""
    i, j = len(ref), len(hyp)
    while i > 0 and j > 0 and d[i][j] == d[i][j - 1] + 1:
        j -= 1
    return len(hyp) - j if i > 0 else len(hyp)


def _edge_substitutions(ref: str, hyp: str) -> int:
    """Substituted characters at the end of an optimal alignment of ref and hyp, up to the last matching one."""
    d = _table(ref, hyp)
    i, j, subs = len(ref), len(hyp), 0
    while i > 0 and j > 0 and ref[i - 1] != hyp[j - 1] and d[i][j] == d[i - 1][j - 1] + 1:
        i, j, subs = i - 1, j - 1, subs + 1
    return subs


def inserted(ref_text: str, hyp_text: str, lang: str = "") -> tuple[int, int, int]:
    """(edits, inserted words, inserted characters): the hallucination count, text outside the reference's span.

    The hypothesis is aligned with the reference (normal-form characters); its characters before the first or after
    the last one aligned to a reference character are outside. They count as an inserted word (the whitespace token
    holding them) unless they are a spill: no more of them on that side than the reference's edge characters the
    hypothesis gets wrong there, i.e. the reference's first/last words written longer (a kana reading of a kanji
    word: きょうちょうは for 気象庁は puts 3 characters before the reference, against 3 substituted). Invented text
    after correctly heard last words has no substituted edge, so it always counts. Spilled characters still count
    in the characters figure."""
    ref, hyp = chars(ref_text, lang), chars(hyp_text, lang)
    d = _table(ref, hyp)
    edits = d[-1][-1]
    after = _trailing(ref, hyp, d)
    before = _trailing(ref[::-1], hyp[::-1], _table(ref[::-1], hyp[::-1])) if len(hyp) > after else 0
    last = len(hyp) - after
    first = min(before, last)
    outside = set(range(first)) | set(range(last, len(hyp)))
    if not outside:
        return edits, 0, 0
    counted = set(outside)
    if first and first <= _edge_substitutions(ref[::-1], hyp[first:last][::-1]):
        counted -= set(range(first))
    if last < len(hyp) and len(hyp) - last <= _edge_substitutions(ref, hyp[first:last]):
        counted -= set(range(last, len(hyp)))
    n_words, pos = 0, 0  # normal-form characters mapped back to the hypothesis' whitespace tokens
    for token in hyp_text.split():
        size = len(chars(token, lang))
        if size and any(k in counted for k in range(pos, pos + size)):
            n_words += 1
        pos += size
    return edits, n_words, len(outside)
