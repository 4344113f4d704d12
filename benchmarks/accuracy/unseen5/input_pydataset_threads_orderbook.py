# Predicts the direction of the next mid-price move of an exchange-traded instrument from
# its limit order book. Each example replays a stream of order events (add, cancel, market
# order) into a price-level book kept in Python dicts, then takes microstructure features:
# depth on 10 levels each side, order-flow imbalance, microprice, spread, trade counts and a
# realised volatility of the mid-price. A keras.utils.PyDataset with three worker threads
# builds the batches.
import argparse
import math

import keras
import numpy as np
from truth import measure, timed_fit

LEVELS, EVENTS, BATCH, STEPS = 10, 40, 128, 180
FEATURES = 4 * LEVELS + 8
TICK = 0.01


def replay(rnd):
    bids, asks = {}, {}
    mid = 100.0
    for k in range(1, LEVELS + 1):
        bids[round(mid - k * TICK, 2)] = int(rnd.integers(50, 500))
        asks[round(mid + k * TICK, 2)] = int(rnd.integers(50, 500))
    drift = rnd.normal(0, 0.3)
    mids, ofi, trades_buy, trades_sell = [], 0.0, 0, 0
    for kind, side, offset, size in zip(
        rnd.choice(3, EVENTS, p=[0.55, 0.3, 0.15]),
        rnd.random(EVENTS),
        rnd.integers(0, LEVELS, EVENTS),
        rnd.integers(10, 300, EVENTS),
        strict=True,
    ):
        best_bid, best_ask = max(bids), min(asks)
        buy = bool(side < 0.5 + 0.1 * math.tanh(drift))
        if kind == 0:  # limit order added
            if buy:
                price = round(best_bid - offset * TICK, 2)
                bids[price] = bids.get(price, 0) + int(size)
                ofi += size if offset == 0 else 0
            else:
                price = round(best_ask + offset * TICK, 2)
                asks[price] = asks.get(price, 0) + int(size)
                ofi -= size if offset == 0 else 0
        elif kind == 1:  # cancel
            book = bids if buy else asks
            price = sorted(book, reverse=buy)[min(int(offset), len(book) - 1)]
            book[price] -= min(book[price], int(size))
            if book[price] == 0 and len(book) > 1:
                del book[price]
        else:  # market order walks the opposite side
            book = asks if buy else bids
            remaining = int(size)
            while remaining > 0 and len(book) > 1:
                price = min(book) if buy else max(book)
                take = min(remaining, book[price])
                book[price] -= take
                remaining -= take
                if book[price] == 0:
                    del book[price]
            if buy:
                trades_buy += 1
            else:
                trades_sell += 1
        for book, sign in ((bids, -1), (asks, 1)):
            while len(book) < LEVELS:
                edge = min(book) if sign < 0 else max(book)
                book[round(edge + sign * TICK, 2)] = int(rnd.integers(50, 300))
        mids.append((max(bids) + min(asks)) / 2)
    return bids, asks, mids, ofi, trades_buy, trades_sell


def features(rnd):
    bids, asks, mids, ofi, buys, sells = replay(rnd)
    bid_levels = sorted(bids.items(), reverse=True)[:LEVELS]
    ask_levels = sorted(asks.items())[:LEVELS]
    best_bid, bid_size = bid_levels[0]
    best_ask, ask_size = ask_levels[0]
    mid = (best_bid + best_ask) / 2
    micro = (best_bid * ask_size + best_ask * bid_size) / (bid_size + ask_size)
    row = []
    for price, size in bid_levels + ask_levels:
        row += [(price - mid) / TICK / LEVELS, math.log1p(size) / 6]
    returns = [math.log(b / a) for a, b in zip(mids, mids[1:], strict=False)]
    vol = math.sqrt(sum(r * r for r in returns) / len(returns)) * 1e3
    depth_bid = sum(s for _, s in bid_levels)
    depth_ask = sum(s for _, s in ask_levels)
    row += [
        (micro - mid) / TICK,
        (best_ask - best_bid) / TICK / 5,
        ofi / 2000,
        (depth_bid - depth_ask) / (depth_bid + depth_ask),
        buys / 20,
        sells / 20,
        vol,
        (mids[-1] - mids[0]) / TICK / 10,
    ]
    label = float(micro > mid + 0.05 * ofi / 2000 * TICK)
    return row, label


class OrderBookBatches(keras.utils.PyDataset):
    def __init__(self, seed, **kwargs):
        super().__init__(**kwargs)
        self.seed = seed

    def __len__(self):
        return STEPS

    def __getitem__(self, index):
        rnd = np.random.default_rng((self.seed, index))
        rows, labels = zip(*(features(rnd) for _ in range(BATCH)), strict=True)
        return np.array(rows, np.float32), np.array(labels, np.float32)


def build_model():
    inputs = keras.Input((FEATURES,))
    h = keras.layers.Dense(1536, activation="relu")(inputs)
    h = keras.layers.Dropout(0.1)(h)
    h = keras.layers.Dense(1536, activation="relu")(h)
    h = keras.layers.Dense(768, activation="relu")(h)
    model = keras.Model(inputs, keras.layers.Dense(1, activation="sigmoid")(h))
    model.compile(keras.optimizers.Adam(3e-4), "binary_crossentropy", metrics=["accuracy"])
    return model


if __name__ == "__main__":
    parser = argparse.ArgumentParser()
    parser.add_argument("--truth", action="store_true")
    parser.parse_args()
    model = build_model()

    def books():
        return OrderBookBatches(seed=7, workers=3, use_multiprocessing=False)

    timed_fit(model, books(), STEPS)
    measure(model, books, STEPS)
