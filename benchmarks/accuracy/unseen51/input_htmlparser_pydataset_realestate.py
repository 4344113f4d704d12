"""Real-estate price regression from scraped listing pages: a few thousand HTML listing
pages are saved as one .html file each, and a keras.utils.PyDataset reads a batch of
pages per index, runs an html.parser.HTMLParser subclass over each page to pull price
facts, amenities and description length, and hands float arrays to model.fit.
"""
import json
import os
import re
import shutil
import sys
import tempfile
import time
from html.parser import HTMLParser

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
import numpy as np
import tensorflow as tf
import keras

BATCH = 32
STEPS = 120  # = N_PAGES // BATCH, one pass over the pages per epoch
EPOCHS = 4
N_PAGES = 3840
AMENITIES = ["pool", "garage", "garden", "balcony", "fireplace", "elevator", "solar",
             "basement", "gym", "doorman", "patio", "heatpump", "ev-charger", "sauna"]
FEAT = 8 + len(AMENITIES) + 32


class StepTimer(keras.callbacks.Callback):
    def __init__(self):
        super().__init__()
        self.gaps, self.last = [], None

    def on_epoch_begin(self, epoch, logs=None):
        self.last = None

    def on_train_batch_end(self, batch, logs=None):
        t = time.perf_counter()
        if self.last is not None:
            self.gaps.append(t - self.last)
        self.last = t

    def sec_per_step(self):
        g = self.gaps[5:] or self.gaps
        return sum(g) / len(g)


def emit(rec):
    path = os.environ.get("ACCURACY_OUT")
    if path:
        with open(path, "a") as fh:
            fh.write(json.dumps(rec) + "\n")


def make_page(rng):
    beds = int(rng.integers(1, 6)); baths = int(rng.integers(1, 4))
    sqft = int(rng.normal(1400 + 400 * beds, 200)); year = int(rng.integers(1900, 2025))
    lat = 47.5 + rng.random() * 0.3; lon = -122.4 + rng.random() * 0.3
    am = [a for a in AMENITIES if rng.random() < 0.3]
    price = 90 * sqft + 25000 * baths + 15000 * len(am) + 800 * (year - 1900) + rng.normal(0, 20000)
    words = " ".join(rng.choice(["bright", "spacious", "quiet", "renovated", "cozy", "modern",
                                 "charming", "view", "close", "transit", "schools", "park"], rng.integers(40, 120)))
    rows = "".join(f"<tr><th>{k}</th><td>{v}</td></tr>" for k, v in
                   [("Bedrooms", beds), ("Bathrooms", baths), ("Living area", f"{sqft:,} sq ft"),
                    ("Year built", year), ("HOA", f"${int(rng.integers(0, 600))}/mo"),
                    ("Lot", f"{int(rng.integers(2000, 12000)):,} sq ft")])
    lis = "".join(f'<li class="amenity" data-key="{a}">{a.title()}</li>' for a in am)
    nav = "".join(f'<a href="/listing/{int(rng.integers(1e6))}">Similar {i}</a>' for i in range(25))
    html = (f"<!DOCTYPE html><html><head><title>Listing</title><meta name='geo' content='{lat:.5f},{lon:.5f}'>"
            f"<script>var x = {{'a': 1}};</script></head><body><nav>{nav}</nav><div id='main'>"
            f"<h1 class='addr'>{int(rng.integers(1, 9999))} Main St</h1><table class='facts'>{rows}</table>"
            f"<ul class='amenities'>{lis}</ul><div class='desc'><p>{words}</p></div></div>"
            f"<footer>{nav}</footer></body></html>")
    return html, price / 1e6


class ListingParser(HTMLParser):
    def __init__(self):
        super().__init__()
        self.facts, self.amen, self.cur_th, self.in_td, self.in_desc = {}, [], None, False, False
        self.desc_len, self.geo, self.n_links = 0, (0.0, 0.0), 0
        self._th = False

    def handle_starttag(self, tag, attrs):
        a = dict(attrs)
        if tag == "th":
            self._th = True
        elif tag == "td":
            self.in_td = True
        elif tag == "li" and a.get("class") == "amenity":
            self.amen.append(a.get("data-key"))
        elif tag == "meta" and a.get("name") == "geo":
            la, lo = a["content"].split(",")
            self.geo = (float(la), float(lo))
        elif tag == "div" and a.get("class") == "desc":
            self.in_desc = True
        elif tag == "a":
            self.n_links += 1

    def handle_endtag(self, tag):
        if tag == "th":
            self._th = False
        elif tag == "td":
            self.in_td = False
        elif tag == "div":
            self.in_desc = False

    def handle_data(self, data):
        if self._th:
            self.cur_th = data.strip()
        elif self.in_td and self.cur_th:
            self.facts[self.cur_th] = data.strip()
        elif self.in_desc:
            self.desc_len += len(data.split())


def num(s):
    m = re.search(r"[\d,]+", s or "0")
    return float(m.group(0).replace(",", "")) if m else 0.0


def featurize(html):
    p = ListingParser()
    p.feed(html)
    p.close()
    f = p.facts
    v = [num(f.get("Bedrooms")), num(f.get("Bathrooms")), num(f.get("Living area")) / 1000,
         (num(f.get("Year built")) - 1900) / 100, num(f.get("HOA")) / 100, num(f.get("Lot")) / 1000,
         p.desc_len / 100, (p.geo[0] - 47.5) * 10]
    v += [1.0 if a in p.amen else 0.0 for a in AMENITIES]
    geo = np.zeros(32, np.float32)
    geo[int((p.geo[1] + 122.4) / 0.3 * 31.99)] = 1.0
    return np.concatenate([np.array(v, np.float32), geo])


class ListingPages(keras.utils.PyDataset):
    def __init__(self, paths, prices, **kw):
        super().__init__(**kw)
        self.paths, self.prices = paths, prices

    def __len__(self):
        return len(self.paths) // BATCH

    def __getitem__(self, i):
        idx = range(i * BATCH, (i + 1) * BATCH)
        xs = []
        for j in idx:
            with open(self.paths[j], encoding="utf-8") as fh:
                xs.append(featurize(fh.read()))
        return np.stack(xs), self.prices[i * BATCH:(i + 1) * BATCH]


def build_model():
    inp = keras.Input((FEAT,))
    x = keras.layers.Dense(1024, activation="relu")(inp)
    x = keras.layers.Dense(1024, activation="relu")(x)
    x = keras.layers.Dense(512, activation="relu")(x)
    out = keras.layers.Dense(1)(x)
    m = keras.Model(inp, out)
    m.compile(optimizer="adam", loss="mse", metrics=["mae"])
    return m


def main():
    tmp = tempfile.mkdtemp(prefix="u51_input_htmlparser_pydataset_realestate_")
    try:
        rng = np.random.default_rng(51)
        paths, prices = [], []
        for i in range(N_PAGES):
            html, y = make_page(rng)
            p = os.path.join(tmp, f"listing_{i:05d}.html")
            with open(p, "w", encoding="utf-8") as fh:
                fh.write(html)
            paths.append(p); prices.append(y)
        prices = np.array(prices, np.float32)
        data = ListingPages(paths, prices)

        tf.random.set_seed(51)
        model = build_model()
        timer = StepTimer()
        t0 = time.perf_counter()
        hist = model.fit(data, epochs=EPOCHS, callbacks=[timer], verbose=0)
        full = timer.sec_per_step()
        emit({"steps_per_second": 1.0 / full})

        if "--truth" in sys.argv:
            xb, yb = data[0]
            tf.random.set_seed(51)
            model2 = build_model()
            timer2 = StepTimer()
            model2.fit(tf.data.Dataset.from_tensors((xb, yb)).repeat(), steps_per_epoch=STEPS,
                       epochs=EPOCHS, callbacks=[timer2], verbose=0)
            comp = timer2.sec_per_step()
            frac = min(max((full - comp) / full, 0.0), 1.0)
            emit({"truth_input_fraction": frac})
            print(f"truth: full={full*1000:.1f}ms compute={comp*1000:.1f}ms input_fraction={frac:.2f}")
        print(f"listing price model: {STEPS*EPOCHS} steps, {1.0/full:.1f} steps/s, "
              f"final mae {hist.history['mae'][-1]:.4f}, fit {time.perf_counter()-t0:.1f}s")
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    main()
