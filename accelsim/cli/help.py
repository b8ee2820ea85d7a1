"""The command line's help texts: each verb's examples (its --help epilog) and the shared --hw help.

Kept apart from `accelsim.cli.main`, which parses and prints, so that the examples read as one list.
"""

from __future__ import annotations

from accelsim.hw_configs import DEFAULT_HOST

HOST_HELP = (f"host config (default: {DEFAULT_HOST}; beside ethos_u55_* configs cortex_m55, the Corstone-300's "
             "Cortex-M55; beside ethos_u65_* cortex_m85, the Corstone-310's Cortex-M85)")
HW_HELP = ("an accelerator config (a YAML path or shipped name); repeat it to attach several: they join one "
           "system, and in the order given each claims from the nodes the ones before it left")

# `accelsim stream --segmentation`'s choices, here so that parsing imports no simulation (start-up);
# tests/accelsim/test_streams.py checks they are accelsim.workloads.segments.SEGMENTATIONS.
STREAM_SEGMENTATIONS = ("compiler", "profiled", "balanced")

# `accelsim stream`'s help: the verb, its description and each option's line.
STREAM_HELP = {
    "verb": "frames of a model over time: throughput, tail latency, replicas, pipelines",
    "description": "Simulate a stream of frames of one model: throughput, latency p50/p90/p99, dropped frames, "
                   "each unit's utilisation and the bottleneck. With --count N the system's accelerator is copied N "
                   "times, used as replicas (each frame to the next free copy) or as a pipeline of segments "
                   "(--segmentation: compiler = the Edge TPU compiler's split, profiled = libcoral's "
                   "partition_with_profiling, balanced = ours, never worse).",
    "--count": "copies of the accelerator (default 1)",
    "--frames": "frames offered (default 100)",
    "--rate": "frames per second (default: back-to-back, one frame in flight per copy)",
    "--max-in-flight": "the flow limit: frames in flight at most (MediaPipe's FlowLimiterCalculator; default none "
                       "with --rate)",
    "--max-in-queue": "frames waiting at the flow limit (0: a frame over it is dropped; 1: it replaces the waiting "
                      "one; default 0)",
    "--mode": "how the copies are used (default replicas; one copy: the system as given)",
    "--segmentation": "how a pipeline is cut (default balanced)",
    "--schedule": "each frame's steps: sequential (default) or dataflow",
    "--trace": "write a Chrome/Perfetto trace of the first 20 frames",
    "--shared-link": "the copies share one link (one USB bus or one AXI port), its transfers sharing its bandwidth; "
                     "default: a link each",
}
# Every example that names a model uses the sample models `accelsim examples` writes into models/ (MODELS_NOTE).
MODELS_NOTE = "  (models/: the sample models, written by `accelsim examples`)\n"

EPILOGS = {
    "examples": """examples:
  accelsim examples                # writes models/*.tflite and models/custom_op_atan.py
  accelsim examples /tmp/samples
""",
    "inspect": """examples:
  accelsim inspect models/mobilenet_v2_035_96_int8.tflite
  accelsim inspect model.tflite --json > ops.json
""",
    "ops": """examples:
  accelsim ops models/dilated_cnn_int8.tflite
  accelsim ops model.tflite > my_resolver.py
""",
    "run": """examples:
  accelsim run                                   # the default experiment -> reports/default/
  accelsim run examples/systolic_sweep.yaml --jobs 2
  accelsim run my_experiment.yaml --out /tmp/report --no-cache
  accelsim run my_experiment.yaml --executor dask --jobs 4       # a LocalCluster of 4 worker processes
  accelsim run my_experiment.yaml --executor dask --scheduler tcp://10.0.0.5:8786
""",
    "stream": """examples:
  accelsim stream models/mobilenet_v2_100_224_int8.tflite --hw edgetpu_usb --frames 200
  accelsim stream model.tflite --hw edgetpu_usb --count 4 --mode pipeline --segmentation compiler --json
  accelsim stream model.tflite --hw edgetpu_pcie --count 2 --mode replicas --rate 60 --max-in-flight 2
  accelsim stream model.tflite --hw edgetpu_usb --rate 30 --max-in-flight 1 --max-in-queue 1 --trace t.json
""",
    "benchmark": """examples:
  accelsim benchmark models/mobilenet_v2_100_224_int8.tflite --hw edgetpu_usb
  accelsim benchmark model.tflite --hw edgetpu_usb --num-runs 0     # cost only: no NumPy run, start-up + one simulation
  accelsim benchmark model.tflite --hw hw_configs/hexagon_dsp.yaml --num-runs 20 --enable-op-profiling
  accelsim benchmark model.tflite --hw edgetpu_pcie --max-delegated-partitions 2 --json
  accelsim benchmark models/selfie_like_float.tflite --ops accelsim.ops.mediapipe   # custom ops
  accelsim benchmark models/atan_custom.tflite --ops models/custom_op_atan.py
""",
    "diff": """examples:
  accelsim diff models/mobilenet_v2_035_96_int8.tflite --hw edgetpu_usb
  accelsim diff model.tflite --hw my_float16_accel.yaml --num-runs 100 --json
  accelsim diff model.tflite --hw hexagon_dsp --input images.npy     # real inputs: [runs, *input shape]
""",
    "compare": """examples:
  accelsim compare models/mobilenet_v2_035_96_int8.tflite --hw edgetpu_usb --hw hexagon_dsp
  accelsim compare model_a.tflite model_b.tflite --hw edgetpu_pcie --hw edgetpu_usb,hexagon_dsp --json
  accelsim compare reports/x/results.json reports/y/results.json --plot /tmp/x_vs_y.png
  accelsim compare reports/x/results.json --metrics latency,energy --columns 0,3
""",
    "whatif": """examples:
  accelsim whatif models/transformer_block_int8.tflite --hw edgetpu_pcie
  accelsim whatif models/dilated_cnn_int8.tflite --hw hexagon_dsp --json
""",
    "sensitivity": """examples:
  accelsim sensitivity models/mobilenet_v2_100_224_int8.tflite --hw edgetpu_usb
  accelsim sensitivity models/mobilenet_v2_035_96_int8.tflite --hw edgetpu_usb --hw hexagon_dsp
  accelsim sensitivity model.tflite --hw my_npu.yaml --host host_x86 --json
""",
    "llm": """examples:
  accelsim llm gemma3-1b --system galaxy_s24_ultra --backend gpu --quant int4 --prefill 1024 --decode 256 --context 4096
  accelsim llm llama3.2-3b --system galaxy_s25_ultra --backend npu --quant int4-block32 --context 1280 --json
  accelsim llm my_decoder.tflite --system macbook_pro_m3 --prefill 8 --decode 16
""",
    "validate": """examples:
  accelsim validate my_accel.yaml
  accelsim validate examples/default/default.yaml my_accel.yaml
""",
    "experiment": """examples:
  accelsim experiment              # every key of an experiment file, one line each
  accelsim experiment --schema     # the reference: value, default, example and meaning of every key
""",
    "configs": """examples:
  accelsim configs                 # the shipped hardware configs, one line each
  accelsim configs --schema        # every key of every kind, claim syntax and constraints
""",
}
EPILOGS = {verb: text + MODELS_NOTE if " models/" in text and verb != "examples" else text
           for verb, text in EPILOGS.items()}
