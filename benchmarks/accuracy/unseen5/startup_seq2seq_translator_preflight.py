# Pre-flight for the German-to-English translation job: checks the environment (versions,
# devices, threads, dtype policy, determinism settings), sets up the two TextVectorization
# layers from fixed vocabulary files, builds the encoder-decoder transformer (shared
# positional embeddings, 3 encoder and 3 decoder blocks), compiles it, runs the tokenizers
# on a couple of sentences, prints the summary and writes the model's JSON and the
# vocabularies next to each other in a run folder. No training happens here.
import json
import os
import platform
import sys
import tempfile

import keras
import tensorflow as tf

print(f"python {platform.python_version()} on {platform.machine()} ({sys.platform})")
print(
    "tensorflow", tf.__version__, "| keras", keras.__version__, "| backend", keras.backend.backend()
)
print(
    "gpus:",
    tf.config.list_physical_devices("GPU") or "none",
    "| cuda build:",
    tf.test.is_built_with_cuda(),
)
print(
    "cpus:", [d.name for d in tf.config.list_physical_devices("CPU")], "| os cpus:", os.cpu_count()
)
print(
    "threads: intra",
    tf.config.threading.get_intra_op_parallelism_threads(),
    "inter",
    tf.config.threading.get_inter_op_parallelism_threads(),
)
print("dtype policy:", keras.config.dtype_policy().name, "| floatx:", keras.config.floatx())
keras.utils.set_random_seed(1234)

SOURCE_VOCAB, TARGET_VOCAB, LENGTH, WIDTH, HEADS, BLOCKS = 24000, 20000, 64, 256, 8, 3
syllables = ["ka", "ne", "li", "ro", "mu", "sa", "te", "vo", "gi", "pe", "du", "ha", "bi", "zo"]
source_words = [
    "".join(syllables[(i // len(syllables) ** k) % len(syllables)] for k in range(4))
    for i in range(SOURCE_VOCAB - 2)
]
target_words = [w[::-1] + "s" for w in source_words[: TARGET_VOCAB - 4]]

source_tokens = keras.layers.TextVectorization(
    max_tokens=SOURCE_VOCAB, output_sequence_length=LENGTH, vocabulary=source_words
)
target_tokens = keras.layers.TextVectorization(
    max_tokens=TARGET_VOCAB,
    output_sequence_length=LENGTH + 1,
    vocabulary=["[start]", "[end]"] + target_words,
    standardize=None,
)
print(
    "source vocabulary:",
    source_tokens.vocabulary_size(),
    "| target:",
    target_tokens.vocabulary_size(),
)
print("tokenised:", source_tokens(["kaneliro mukaneli tevogipe", source_words[77]]).numpy()[:, :4])


@keras.saving.register_keras_serializable(package="translator")
class PositionalEmbedding(keras.layers.Layer):
    def __init__(self, vocab, length, width, **kwargs):
        super().__init__(**kwargs)
        self.vocab, self.length, self.width = vocab, length, width
        self.tokens = keras.layers.Embedding(vocab, width, mask_zero=True)
        self.positions = keras.layers.Embedding(length, width)

    def call(self, ids):
        positions = keras.ops.arange(keras.ops.shape(ids)[-1])
        return self.tokens(ids) + self.positions(positions)

    def compute_mask(self, ids, mask=None):
        return keras.ops.not_equal(ids, 0)

    def get_config(self):
        return {
            **super().get_config(),
            "vocab": self.vocab,
            "length": self.length,
            "width": self.width,
        }


def encoder_block(x):
    attn = keras.layers.MultiHeadAttention(HEADS, WIDTH // HEADS)(x, x)
    x = keras.layers.LayerNormalization()(x + attn)
    ff = keras.layers.Dense(WIDTH * 4, activation="relu")(x)
    return keras.layers.LayerNormalization()(x + keras.layers.Dense(WIDTH)(ff))


def decoder_block(y, memory):
    self_attn = keras.layers.MultiHeadAttention(HEADS, WIDTH // HEADS)(y, y, use_causal_mask=True)
    y = keras.layers.LayerNormalization()(y + self_attn)
    cross = keras.layers.MultiHeadAttention(HEADS, WIDTH // HEADS)(y, memory)
    y = keras.layers.LayerNormalization()(y + cross)
    ff = keras.layers.Dense(WIDTH * 4, activation="relu")(y)
    return keras.layers.LayerNormalization()(y + keras.layers.Dense(WIDTH)(ff))


source = keras.Input((LENGTH,), dtype="int64", name="source")
target = keras.Input((LENGTH,), dtype="int64", name="target_in")
memory = PositionalEmbedding(SOURCE_VOCAB, LENGTH, WIDTH)(source)
for _ in range(BLOCKS):
    memory = encoder_block(memory)
y = PositionalEmbedding(TARGET_VOCAB, LENGTH, WIDTH)(target)
for _ in range(BLOCKS):
    y = decoder_block(y, memory)
logits = keras.layers.Dense(TARGET_VOCAB, name="next_token")(keras.layers.Dropout(0.1)(y))
translator = keras.Model([source, target], logits, name="translator")
schedule = keras.optimizers.schedules.CosineDecay(
    0.0, 50_000, warmup_target=5e-4, warmup_steps=4000
)
translator.compile(
    keras.optimizers.Adam(schedule, beta_2=0.98, epsilon=1e-9),
    keras.losses.SparseCategoricalCrossentropy(from_logits=True, ignore_class=0),
    metrics=["accuracy"],
)
translator.summary(line_length=110)
print(f"parameters: {translator.count_params():,}")

with tempfile.TemporaryDirectory(prefix="translator-preflight-") as run_dir:
    with open(os.path.join(run_dir, "model.json"), "w") as fh:
        fh.write(translator.to_json())
    with open(os.path.join(run_dir, "vocab.json"), "w") as fh:
        json.dump(
            {"source": source_tokens.get_vocabulary(), "target": target_tokens.get_vocabulary()}, fh
        )
    sizes = {name: os.path.getsize(os.path.join(run_dir, name)) for name in os.listdir(run_dir)}
    print("wrote", sizes, "to", run_dir)
