"""Multi-worker jobs: a worker-side step timer (:mod:`.worker_timer`) and the merge of the workers
records on one timeline, with the straggler named (:mod:`.merge`).
"""
