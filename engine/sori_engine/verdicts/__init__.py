"""Every judgement that decoded output is bad, in one place: what is decoded again, cut or dropped, and why.

The line between the two modules is when a check can be made and what it can do about it:

- `per_window`: checks of one chunk's decoded segments while its window is being decoded (clip time, before
  placement), with the audio still at hand. Their answer is another decode: a suspect chunk is decoded again, a
  loop is kept up to where it starts and the speech after it decoded on, a rest that ran to its token cap is
  dropped, speech left after the last segment is decoded on when it holds a word. They ask the speech map of the
  window only for seconds of speech.
- `per_file`: the four rules over the whole transcript in file time with the file's speech map (loops, the bag of
  hallucinations, text on no speech, unsure text on a tail), after every window is decoded; a streaming interim
  passes them too. Their answer can only be to remove text: the audio is no longer decoded. They hold the speech
  map and the text normal form that both use.

A check that can still be answered by decoding again belongs to `per_window`; one that needs the segments around
it (across chunks and windows) belongs to `per_file`. Every threshold is a DecodeOptions field.
"""
