"""Workloads beyond one inference: LLM generation (prefill, then decode over a KV cache), streams of frames,
and models cut into pipeline segments.

`architectures` names decoders and their published hyper-parameters, `builder` writes the graph litert-torch's
converter would for one, `llm_file` reads and checks an LLM .tflite's signatures, `generation` costs prefill and
decode through the simulation layer, `systems` names the phones and laptop it runs on; `segments` cuts a model
over copies of one accelerator and `streams` replays frames of one or more models on shared units (SimPy).
"""
