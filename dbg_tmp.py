import asyncio, os, json, signal, time
from pathlib import Path
from tests.helpers.redis_server import RedisServer
from bench.class_client import start_server, wait_for_server, warm_up, CLASS_CACHE_MB, OPEN_TIMEOUT_S
from bench.bench_hall_faults import Browser, step_to, ASSIGNMENT, Hall, download, PREDICTIONS, GRADEBOOK
from session.classroom import Registry
from session.redis_store import RedisStore
from tools.app_server import free_port

async def main():
    with RedisServer() as redis:
        env = dict(os.environ, SCHEDLAB_RUNNER="fake", SCHEDLAB_RUN_CACHE_MB=CLASS_CACHE_MB, SCHEDLAB_REDIS_URL=redis.url, SCHEDLAB_PRECOMPUTE="")
        port = free_port()
        server = start_server(env, port)
        try:
            await wait_for_server(port)
            url = f"ws://127.0.0.1:{port}/_stcore/stream"
            reg = Registry(store=RedisStore(redis.url))
            lec = Browser(-1, ASSIGNMENT)
            ws = await lec.open(url)
            await lec.press(ws, "Start a class")
            lec.query = f"{ASSIGNMENT}&class={lec.page.code}"
            await lec.rerun(ws, timeout_s=OPEN_TIMEOUT_S)
            room = reg.get(lec.page.code)
            for f in (1, 2):
                await step_to(lec, ws, f); await asyncio.sleep(0.5); print("lead", room.lectern._lead_data()["frame"])
            print(await download(lec, ws, PREDICTIONS, f"http://127.0.0.1:{port}"))
            for f in (7, 8):
                await step_to(lec, ws, f); await asyncio.sleep(0.5); room.lectern.changed(); print("after download lead", room.lectern._lead_data()["frame"])
            hall = Hall(0, None, [port], [server], env, redis)
            hall.kill_redis()
            await step_to(lec, ws, 3)
            print("alerts", lec.page.alerts)
            await asyncio.sleep(2); redis.start(); await asyncio.sleep(3)
            room.lectern.changed()
            print("lead after restart", room.lectern._lead_data()["frame"])
            for f in (4, 5):
                await step_to(lec, ws, f); await asyncio.sleep(0.5); room.lectern.changed(); print("lead", room.lectern._lead_data()["frame"], lec.page.alerts)
            await lec.rerun(ws, lec._component_state(), timeout_s=OPEN_TIMEOUT_S)
            for f in (6,):
                await step_to(lec, ws, f); await asyncio.sleep(0.5); room.lectern.changed(); print("after full rerun lead", room.lectern._lead_data()["frame"])
            reg.store.close()
        finally:
            server.terminate(); server.wait(20)
asyncio.run(main())
