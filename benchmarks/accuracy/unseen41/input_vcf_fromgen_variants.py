"""Variant triage for a rare-disease cohort: classify each site of a multi-sample VCF as benign/pathogenic-like.
Data path: a bgzip-free plain-text VCF (176 genotyped samples) is written to a temp dir; a Python generator reads it
line by line, splits the tab-separated columns, parses the INFO key=value pairs and every sample's GT:DP:GQ field,
and feeds tf.data.Dataset.from_generator -> batch -> model.fit."""
import argparse, json, os, shutil, sys, tempfile, time
os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
import numpy as np
import tensorflow as tf
import keras

SEED = 41
N_SAMPLES = 176
N_SITES = 3000
BATCH = 64
STEPS = 100
EPOCHS = 3
BASES = "ACGT"
N_FEAT = 3 * N_SAMPLES + 5 + 4 + 4 + 1


class StepTimer(keras.callbacks.Callback):
    def __init__(self):
        super().__init__()
        self.gaps, self._last = [], None

    def on_epoch_begin(self, epoch, logs=None):
        self._last = None

    def on_train_batch_end(self, batch, logs=None):
        t = time.perf_counter()
        if self._last is not None:
            self.gaps.append(t - self._last)
        self._last = t

    def sec_per_step(self):
        g = self.gaps[5:] if len(self.gaps) > 5 else self.gaps
        return float(np.mean(g))


def emit(rec):
    p = os.environ.get("ACCURACY_OUT")
    if p:
        with open(p, "a") as f:
            f.write(json.dumps(rec) + "\n")


def write_vcf(path, rng):
    with open(path, "w") as fh:
        fh.write("##fileformat=VCFv4.2\n")
        for k in ("AF", "MQ", "QD", "FS", "CLNSIG"):
            fh.write(f"##INFO=<ID={k},Number=1,Type=String,Description=\"{k}\">\n")
        fh.write("##FORMAT=<ID=GT,Number=1,Type=String>\n##FORMAT=<ID=DP,Number=1,Type=Integer>\n##FORMAT=<ID=GQ,Number=1,Type=Integer>\n")
        fh.write("#CHROM\tPOS\tID\tREF\tALT\tQUAL\tFILTER\tINFO\tFORMAT\t" + "\t".join(f"S{i:03d}" for i in range(N_SAMPLES)) + "\n")
        pos = 10000
        for i in range(N_SITES):
            pos += int(rng.integers(50, 5000))
            path_like = rng.random() < 0.3
            af = float(rng.beta(0.5, 30 if path_like else 5))
            ref = BASES[rng.integers(4)]
            alt = BASES[rng.integers(4)] if rng.random() < 0.85 else ref + "".join(rng.choice(list(BASES), 3))
            mq = rng.normal(55 if path_like else 58, 3)
            qd = rng.normal(12 if path_like else 18, 4)
            fs = abs(rng.normal(3, 2))
            info = f"AF={af:.4f};MQ={mq:.1f};QD={qd:.2f};FS={fs:.2f};CLNSIG={'Pathogenic' if path_like else 'Benign'}"
            p_alt = min(af * 4, 0.9)
            samples = []
            for _ in range(N_SAMPLES):
                a = int(rng.random() < p_alt); b = int(rng.random() < p_alt)
                samples.append(f"{a}|{b}:{int(rng.integers(8, 90))}:{int(rng.integers(20, 99))}")
            fh.write(f"chr{1 + i % 22}\t{pos}\trs{i}\t{ref}\t{alt}\t{rng.uniform(30, 900):.1f}\tPASS\t{info}\tGT:DP:GQ\t" + "\t".join(samples) + "\n")


def vcf_records(path):
    while True:
        with open(path) as fh:
            for line in fh:
                if line.startswith("#"):
                    continue
                cols = line.rstrip("\n").split("\t")
                info = {}
                for kv in cols[7].split(";"):
                    k, _, v = kv.partition("=")
                    info[k] = v
                fmt = cols[8].split(":")
                gi, di, qi = fmt.index("GT"), fmt.index("DP"), fmt.index("GQ")
                dos, dps, gqs = [], [], []
                for s in cols[9:]:
                    f = s.split(":")
                    alleles = f[gi].replace("|", "/").split("/")
                    dos.append(sum(0 if a in ("0", ".") else 1 for a in alleles))
                    dps.append(np.log1p(float(f[di])))
                    gqs.append(float(f[qi]) / 99.0)
                ref, alt = cols[3], cols[4]
                onehot_r = [1.0 if ref[0] == b else 0.0 for b in BASES]
                onehot_a = [1.0 if alt[0] == b else 0.0 for b in BASES]
                site = [float(info["AF"]) * 10, float(info["MQ"]) / 60, float(info["QD"]) / 20,
                        float(info["FS"]) / 10, np.log10(float(cols[5]))]
                x = np.array(dos + dps + gqs + site + onehot_r + onehot_a + [float(len(ref) != len(alt))], np.float32)
                y = np.float32(info["CLNSIG"] == "Pathogenic")
                yield x, y


def make_ds(path):
    ds = tf.data.Dataset.from_generator(
        lambda: vcf_records(path),
        output_signature=(tf.TensorSpec((N_FEAT,), tf.float32), tf.TensorSpec((), tf.float32)))
    return ds.batch(BATCH).prefetch(2)


def build_model():
    keras.utils.set_random_seed(SEED)
    inp = keras.Input((N_FEAT,))
    h = keras.layers.Dense(1024, activation="relu")(inp)
    h = keras.layers.Dense(512, activation="relu")(h)
    h = keras.layers.Dropout(0.2)(h)
    h = keras.layers.Dense(256, activation="relu")(h)
    out = keras.layers.Dense(1, activation="sigmoid")(h)
    m = keras.Model(inp, out)
    m.compile(optimizer=keras.optimizers.Adam(1e-3), loss="binary_crossentropy", metrics=["auc"])
    return m


def train(ds):
    m = build_model()
    timer = StepTimer()
    hist = m.fit(ds, epochs=EPOCHS, steps_per_epoch=STEPS, callbacks=[timer], verbose=0)
    return timer.sec_per_step(), hist.history


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--truth", action="store_true")
    args = ap.parse_args()
    tmp = tempfile.mkdtemp(prefix="u41_input_vcf_fromgen_variants_")
    try:
        rng = np.random.default_rng(SEED)
        vcf = os.path.join(tmp, "cohort.vcf")
        write_vcf(vcf, rng)
        full, hist = train(make_ds(vcf))
        emit({"steps_per_second": 1.0 / full})
        msg = f"input_vcf_fromgen_variants: {1.0 / full:.2f} steps/s, final loss {hist['loss'][-1]:.4f}"
        if args.truth:
            batch = next(iter(make_ds(vcf)))
            comp, _ = train(tf.data.Dataset.from_tensors(batch).repeat())
            frac = min(max((full - comp) / full, 0.0), 1.0)
            emit({"truth_input_fraction": frac})
            msg += f", truth input fraction {frac:.3f}"
        print(msg)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    main()
