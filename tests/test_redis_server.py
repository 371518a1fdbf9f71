"""The tests' Redis (tests/helpers/redis_server.py): a server of the test's own on a free port, which the registry's
client reaches, that keeps what it was told across a restart (its append-only file), and that is gone, process and
port, once stopped."""

import redis


def test_a_tests_redis_answers_keeps_its_data_across_a_restart_and_is_gone_once_stopped(redis_server):
    client = redis.Redis.from_url(redis_server.url, socket_timeout=5)
    assert client.ping()
    client.set("class:K7QHM:frame", 12)
    client.rpush("class:K7QHM:votes", "s1:a", "s2:b")
    redis_server.restart()  # SIGTERM, then started again on the same port and folder
    client = redis.Redis.from_url(redis_server.url, socket_timeout=5)
    assert client.get("class:K7QHM:frame") == b"12"
    assert client.lrange("class:K7QHM:votes", 0, -1) == [b"s1:a", b"s2:b"]
    process = redis_server.process
    redis_server.stop()
    assert process.poll() is not None and not redis_server.answers()
