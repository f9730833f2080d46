"""One server, many users: training slots and their queue (:mod:`.scheduler`), identical runs computed once
(:mod:`.shared_runs`), runs kept for a browser reload (:mod:`.session_store`, :mod:`.run_files`), compiled
programs kept across runs and restarts (:mod:`.compilation`) and long first compiles in a worker
(:mod:`.precompile`)."""
