"""The diarization models, run without PyTorch: segmentation-3.0 and CAM++ as ONNX graphs built from their
checkpoints (onnx_graph.py, torch_checkpoint.py, weights.py), the fbank features CAM++ takes, and an operator's own
ONNX models in their place (custom.py)."""
