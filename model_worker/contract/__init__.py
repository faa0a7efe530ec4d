"""The contract between the web tier and the engine: the types that cross it and how they travel.

`pages` (a page request, its outcome, a repair note, what a backend can do), `events` (one typed value per
event of docs/protocol.md, with its wire form), `stream` (a generation's events in Redis), `lifecycle` (who
holds a generation, and the web tier's handle on it), `queues` (queue names, routes, priorities) and
`connection` (how a Redis client connects). It imports no engine, worker or lab module.
"""
