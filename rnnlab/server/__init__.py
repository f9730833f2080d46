"""One server, many users: training slots and their queue (:mod:`.scheduler`), runs kept for a browser
reload (:mod:`.session_store`) and compiled programs kept across runs and restarts (:mod:`.compilation`)."""
