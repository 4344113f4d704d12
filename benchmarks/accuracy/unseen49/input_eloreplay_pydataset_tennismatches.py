"""Sports: predicting tennis match winners from pre-match form.
A synthetic pandas table of ATP-style match results is held in memory; a keras.utils.PyDataset
replays each player's recent match history in Python for every sample (an Elo-rating update loop
plus surface win rates) to build pre-match features, and model.fit trains an MLP on them."""
import os, sys, time, json, tempfile, shutil
os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
import numpy as np
import pandas as pd
import tensorflow as tf
import keras

BATCH, STEPS, EPOCHS, N_PLAYERS, N_MATCHES, HIST = 64, 50, 3, 400, 40000, 40
SURFACES = ["hard", "clay", "grass"]

class StepTimer(keras.callbacks.Callback):
    def __init__(self):
        super().__init__(); self.gaps = []; self.last = None
    def on_epoch_begin(self, epoch, logs=None):
        self.last = None
    def on_train_batch_end(self, batch, logs=None):
        t = time.perf_counter()
        if self.last is not None:
            self.gaps.append(t - self.last)
        self.last = t
    def sec_per_step(self):
        g = self.gaps[5:] or self.gaps
        return float(np.mean(g))

def emit(d):
    p = os.environ.get("ACCURACY_OUT")
    if p:
        with open(p, "a") as f:
            f.write(json.dumps(d) + "\n")

def make_matches(rng):
    skill = rng.normal(0, 1, N_PLAYERS)
    a = rng.integers(0, N_PLAYERS, N_MATCHES); b = (a + rng.integers(1, N_PLAYERS, N_MATCHES)) % N_PLAYERS
    surf = rng.integers(0, 3, N_MATCHES)
    p = 1 / (1 + np.exp(-(skill[a] - skill[b])))
    a_won = rng.random(N_MATCHES) < p
    df = pd.DataFrame({"day": np.arange(N_MATCHES), "p1": a, "p2": b,
                       "surface": [SURFACES[s] for s in surf], "p1_won": a_won.astype(int),
                       "sets": rng.integers(2, 6, N_MATCHES)})
    return df

class MatchFeatures(keras.utils.PyDataset):
    """Builds pre-match features by replaying both players' recent results."""
    def __init__(self, df, steps, seed, **kw):
        super().__init__(**kw)
        self.df = df; self.steps = steps; self.rng = np.random.default_rng(seed)
        self.by_player = {p: pd.concat([df[df.p1 == p], df[df.p2 == p]]).sort_values("day") for p in range(N_PLAYERS)}
    def __len__(self):
        return self.steps
    def player_form(self, player, day, surface):
        h = self.by_player[player]
        h = h[h.day < day].tail(HIST)
        elo = 1500.0; surf_w = surf_n = 0; streak = 0
        for row in h.itertuples(index=False):
            me_first = row.p1 == player
            won = row.p1_won == 1 if me_first else row.p1_won == 0
            exp = 1.0 / (1.0 + 10 ** ((1500.0 - elo) / 400.0))
            elo += 32.0 * ((1.0 if won else 0.0) - exp)
            if row.surface == surface:
                surf_n += 1; surf_w += int(won)
            streak = streak + 1 if won else 0
        return [(elo - 1500) / 200, surf_w / max(surf_n, 1), surf_n / HIST, streak / 10, len(h) / HIST]
    def __getitem__(self, idx):
        rows = self.df.iloc[self.rng.integers(N_MATCHES // 2, N_MATCHES, BATCH)]
        xs, ys = [], []
        for r in rows.itertuples(index=False):
            f1 = self.player_form(r.p1, r.day, r.surface); f2 = self.player_form(r.p2, r.day, r.surface)
            s = [float(r.surface == v) for v in SURFACES]
            xs.append(f1 + f2 + [a - b for a, b in zip(f1, f2)] + s); ys.append(r.p1_won)
        return np.array(xs, np.float32), np.array(ys, np.float32)

def build_model():
    inp = keras.Input((18,))
    x = keras.layers.Dense(2048, activation="relu")(inp)
    x = keras.layers.Dense(2048, activation="relu")(x)
    x = keras.layers.Dense(1024, activation="relu")(x)
    out = keras.layers.Dense(1, activation="sigmoid")(x)
    m = keras.Model(inp, out)
    m.compile(optimizer="adam", loss="binary_crossentropy", metrics=["accuracy"])
    return m

def main():
    truth = "--truth" in sys.argv
    tmp = tempfile.mkdtemp(prefix="u49_input_eloreplay_pydataset_tennismatches_")
    try:
        rng = np.random.default_rng(49); tf.random.set_seed(49)
        df = make_matches(rng)
        seq = MatchFeatures(df, STEPS, seed=1)
        model = build_model(); timer = StepTimer()
        model.fit(seq, epochs=EPOCHS, callbacks=[timer], verbose=0)
        full = timer.sec_per_step()
        emit({"steps_per_second": 1.0 / full})
        msg = "tennis elo: %.4f s/step" % full
        if truth:
            batch = tuple(tf.constant(a) for a in seq[0])
            model2 = build_model(); t2 = StepTimer()
            model2.fit(tf.data.Dataset.from_tensors(batch).repeat(), epochs=EPOCHS, steps_per_epoch=STEPS, callbacks=[t2], verbose=0)
            comp = t2.sec_per_step()
            f = min(max((full - comp) / full, 0.0), 1.0)
            emit({"truth_input_fraction": f})
            msg += ", compute %.4f s/step, truth_input_fraction %.3f" % (comp, f)
        print(msg)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)

if __name__ == "__main__":
    main()
