"""The diarization models, run without PyTorch: segmentation-3.0 and CAM++ as ONNX graphs built from their
checkpoints (onnx_graph.py), Resemblyzer's d-vector encoder in numpy, the fbank features CAM++ takes, the
restricted checkpoint reader (torch_checkpoint.py) and the weights check (weights.py)."""
