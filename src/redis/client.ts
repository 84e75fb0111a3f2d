import type { Cluster, Redis } from 'ioredis';

/** A connection to any topology (one Redis, a Sentinel group's primary, a Cluster): feedsync's commands are the same on each. */
export type RedisClient = Redis | Cluster;
