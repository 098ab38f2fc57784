"""Push-notification shapes per protocol version: the config the probe registers, and what a delivery holds.

1.0 flattened the config (`TaskPushNotificationConfig {taskId, url, token, authentication{scheme,
credentials}}`) and delivers a StreamResponse (`{"statusUpdate": …}`); 0.3 wraps it
(`{taskId, pushNotificationConfig{url, token, authentication{schemes[], credentials}}}`) and
leaves the delivered body open (the SDKs send the bare Task or the bare event). The 0.3 proto (HTTP+JSON,
gRPC) names the inline config `pushNotification` and returns `TaskPushNotificationConfig {name:
"tasks/{id}/pushNotificationConfigs/{configId}", pushNotificationConfig}`, listed as `{configs: [...]}`.
"""

from __future__ import annotations

from typing import Any

from probe.wire.dialects import V03, V1, Dialect, Item

AUTH_SCHEME = "Bearer"


def webhook(dialect: Dialect, url: str, token: str, credentials: str) -> dict[str, Any]:
    """The webhook part of a config: where to deliver, the token, and how to authenticate."""
    auth: dict[str, Any] = ({"scheme": AUTH_SCHEME, "credentials": credentials} if dialect.version == "1.0"
                            else {"schemes": [AUTH_SCHEME], "credentials": credentials})
    return {"url": url, "token": token, "authentication": auth}


def inline(dialect: Dialect, url: str, token: str, credentials: str) -> dict[str, Any]:
    """The `configuration` entry that asks for push on a SendMessage."""
    key = ("taskPushNotificationConfig" if dialect.version == "1.0" else "pushNotification" if dialect.proto
           else "pushNotificationConfig")
    return {key: webhook(dialect, url, token, credentials)}


def create_params(dialect: Dialect, task_id: str, url: str, token: str, credentials: str) -> dict[str, Any]:
    hook = webhook(dialect, url, token, credentials)
    if dialect.version == "1.0":
        return {"taskId": task_id, **hook}
    return {"taskId": task_id, "pushNotificationConfig": hook}


def config_params(dialect: Dialect, task_id: str, config_id: str | None = None) -> dict[str, Any]:
    """Params of get / delete (with a config id) and list (without)."""
    if dialect.version == "1.0":
        return {"taskId": task_id} | ({"id": config_id} if config_id is not None else {})
    return {"id": task_id} | ({"pushNotificationConfigId": config_id} if config_id is not None else {})


def read_config(dialect: Dialect, result: Any) -> tuple[str | None, str | None, list[str]]:
    """(config id, url, shape problems) of a returned TaskPushNotificationConfig."""
    if not isinstance(result, dict):
        return None, None, [f"the config is a JSON {type(result).__name__}, not an object"]
    problems: list[str] = []
    body = result
    if dialect.version != "1.0":
        inner = result.get("pushNotificationConfig")
        if not isinstance(inner, dict):
            return None, None, ["a 0.3 TaskPushNotificationConfig needs a pushNotificationConfig object"]
        body = inner
    elif "pushNotificationConfig" in result:
        problems.append("a 1.0 config is flat: pushNotificationConfig is the 0.3 wrapper")
        body = result["pushNotificationConfig"] if isinstance(result["pushNotificationConfig"], dict) else result
    if dialect.version != "1.0" and dialect.proto:
        name = result.get("name")
        if not (isinstance(name, str) and name.startswith("tasks/")):
            problems.append("name is not tasks/{id}/pushNotificationConfigs/{configId}")
    elif not isinstance(result.get("taskId"), str):
        problems.append("taskId is missing")
    config_id = body.get("id") if isinstance(body.get("id"), str) and body.get("id") else None
    url = body.get("url") if isinstance(body.get("url"), str) else None
    if url is None:
        problems.append("url is missing")
    return config_id, url, problems


def listed_configs(dialect: Dialect, result: Any) -> tuple[list[Any] | None, str | None]:
    """The configs of a list answer (1.0 `{configs: [...]}`, 0.3 a bare array), or why it is not one."""
    if dialect.proto:
        if isinstance(result, dict) and isinstance(result.get("configs", []), list):
            return list(result.get("configs", [])), None
        return None, f"a {dialect.label} list answer is {{configs: [...], nextPageToken}}"
    if isinstance(result, list):
        return result, None
    return None, "a 0.3 list answer is an array of TaskPushNotificationConfig"


def delivery_item(dialect: Dialect, body: Any) -> tuple[Item, list[str]]:
    """Read a delivered body as the version prescribes; returns the item and the shape problems.

    1.0: a StreamResponse (MUST, §4.3.3). 0.3: the payload is not fixed; it SHOULD name the task and
    its state, so a bare Task or event is read first and a 1.0 StreamResponse is accepted too.
    """
    if dialect.version == "1.0":
        item = V1.result_item(body)
        return item, list(item.problems)
    item = V03.result_item(body)
    if item.kind == "unknown":
        wrapped = V1.result_item(body)
        if wrapped.kind != "unknown":
            return wrapped, []
    return item, list(item.problems)
