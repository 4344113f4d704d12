"""Hand-built TensorFlow profiler traces (``*.xplane.pb``) for the trace readers' tests."""

from __future__ import annotations

from pathlib import Path

from tfres.devices.inject import _tfres_xplane as xplane

MS = 10**9  # picoseconds in a millisecond


def write_trace(path: Path, lines: dict[str, list[tuple[str, float, float]]]) -> str:
    """A host plane with one line per name; events are (name, start ms, end ms)."""
    pb = xplane._xplane_pb2()
    space = pb.XSpace()
    plane = space.planes.add(name="/host:CPU")
    step_num = plane.stat_metadata[1]
    step_num.id, step_num.name = 1, "step_num"
    ids: dict[str, int] = {}
    for line_id, (line_name, events) in enumerate(lines.items(), start=1):
        line = plane.lines.add(id=line_id, name=line_name, timestamp_ns=0)
        for name, start_ms, end_ms in events:
            if name not in ids:
                ids[name] = len(ids) + 1
                plane.event_metadata[ids[name]].id = ids[name]
                plane.event_metadata[ids[name]].name = name
            event = line.events.add(
                metadata_id=ids[name],
                offset_ps=int(start_ms * MS),
                duration_ps=int((end_ms - start_ms) * MS),
            )
            if name == "train":
                event.stats.add(metadata_id=1, int64_value=int(start_ms))
    path.write_bytes(space.SerializeToString())
    return str(path)
