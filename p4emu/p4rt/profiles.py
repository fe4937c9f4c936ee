"""``ActionProfileMember`` / ``ActionProfileGroup`` entities and one-shot programming.

Semantics (P4Runtime spec "ActionProfileMember & ActionProfileGroup", PI
``ActionProfAccessManual``):

- member INSERT: ALREADY_EXISTS for a used id, INVALID_ARGUMENT without an action or
  with an action that is not one of the profile's tables' actions, RESOURCE_EXHAUSTED
  beyond the profile ``size``; MODIFY: NOT_FOUND, action required; DELETE: NOT_FOUND,
  FAILED_PRECONDITION while the member is in a group or used by a table entry.
- group (selectors only, else INVALID_ARGUMENT) INSERT: ALREADY_EXISTS; every member
  must exist (NOT_FOUND); weight >= 1, no member twice, ``0 <= max_size <=
  max_group_size`` (INVALID_ARGUMENT); sum of weights above ``max_size`` (or
  ``max_group_size`` when 0) is RESOURCE_EXHAUSTED (PI). MODIFY: NOT_FOUND, a non-zero
  ``max_size`` different from the one inserted is INVALID_ARGUMENT. DELETE: NOT_FOUND,
  FAILED_PRECONDITION while a table entry uses it.
- Watch ports are stored and read back; p4emu considers every port up.
- A profile is programmed either with members/groups or with one-shot action sets
  (``ActionProfileActionSet`` in table entries), never both (INVALID_ARGUMENT). One-shot
  groups and members are hidden: member/group reads skip profiles in one-shot use.
- Reads: ``action_profile_id`` 0 means every profile, ``member_id``/``group_id`` 0 every
  member/group; an unknown member/group id reads nothing (PI). Groups list their
  members by member id (PI), with weight and watch port.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from typing import Any

from p4emu.p4rt.codec import decode_params, decode_unsigned, encode_params, encode_unsigned
from p4emu.p4rt.context import ACTION, ACTION_PROFILE, Context, Undo, no_undo
from p4emu.p4rt.exceptions import (
    P4RuntimeError,
    already_exists,
    failed_precondition,
    invalid,
    not_found,
    resource_exhausted,
    unimplemented,
)
from p4emu.proto import p4r
from p4emu.runtime.action_profiles import ActionProfile
from p4emu.runtime.exceptions import (
    ActionProfileError,
    InvalidMemberError,
    MemberExistsError,
    MemberInUseError,
    MemberNotFoundError,
    ProfileFullError,
)

INSERT, MODIFY, DELETE = p4r.Update.INSERT, p4r.Update.MODIFY, p4r.Update.DELETE


def profile_error(error: ActionProfileError) -> P4RuntimeError:
    """The P4Runtime code of an :class:`ActionProfileError` raised by the profile."""
    message = str(error)
    if isinstance(error, MemberExistsError):
        return already_exists(message)
    if isinstance(error, MemberNotFoundError):
        return not_found(message)
    if isinstance(error, MemberInUseError):
        return failed_precondition(message)
    if isinstance(error, ProfileFullError):
        return resource_exhausted(message)
    if isinstance(error, InvalidMemberError):
        return invalid(message)
    return invalid(message)


def decode_profile_action(
    ctx: Context, profile_name: str, profile: ActionProfile, action: p4r.Action, where: str
) -> tuple[int, tuple[int, ...]]:
    """``(action_id, args)`` of an action bound to a member of ``profile``."""
    ctx.lookup(ctx.objects.actions, action.action_id, ACTION)
    allowed = profile.action_param_widths
    if allowed is not None and action.action_id not in allowed:
        raise invalid(
            f"{where}: action id {action.action_id} is not an action of the tables "
            f"implemented by action profile {profile_name}"
        )
    args = decode_params(action.params, ctx.param_specs(action.action_id), where)
    return action.action_id, args


def decode_watch(message: Any, where: str) -> tuple[str, Any] | None:
    """The watch port of a group member / one-shot action, as it will be read back."""
    kind = message.WhichOneof("watch_kind")
    if kind == "watch":
        return ("watch", message.watch)
    if kind == "watch_port":
        value = decode_unsigned(message.watch_port, 32, f"{where}: watch_port")
        return ("watch_port", encode_unsigned(value))
    return None


def encode_watch(message: Any, watch: tuple[str, Any] | None) -> None:
    if watch is None:
        return
    setattr(message, watch[0], watch[1])


class ActionProfiles:
    """Writes and reads of members and groups."""

    def __init__(self, ctx: Context) -> None:
        self.ctx = ctx

    # --- members ------------------------------------------------------------------------

    def write_member(self, update_type: int, member: p4r.ActionProfileMember) -> Undo:
        name, profile = self.ctx.profile(member.action_profile_id)
        where = f"action profile {name} member {member.member_id}"
        self._require_manual(name, where)
        if update_type == DELETE:
            return self._delete_member(profile, member.member_id, where)
        if update_type not in (INSERT, MODIFY):
            raise invalid(f"{where}: invalid update type {update_type}")
        if member.member_id == 0:
            raise invalid(f"{where}: 0 is not a valid member id")
        if not member.HasField("action"):
            raise invalid(f"{where}: the action must be set")
        action_id, args = decode_profile_action(self.ctx, name, profile, member.action, where)
        try:
            if update_type == INSERT:
                profile.insert_member(member.member_id, action_id, args)
                return lambda: profile.delete_member(member.member_id)
            old = profile.get_member(member.member_id)
            old_action, old_args = old.action_id, old.args
            profile.modify_member(member.member_id, action_id, args)
        except ActionProfileError as error:
            raise profile_error(error) from None
        return lambda: profile.modify_member(member.member_id, old_action, old_args)

    def _delete_member(self, profile: ActionProfile, member_id: int, where: str) -> Undo:
        try:
            old = profile.get_member(member_id)
            action_id, args = old.action_id, old.args
            profile.delete_member(member_id)
        except ActionProfileError as error:
            raise profile_error(error) from None
        return lambda: profile.insert_member(member_id, action_id, args)

    def read_members(self, member: p4r.ActionProfileMember) -> Iterator[p4r.Entity]:
        for name, profile in self._profiles(member.action_profile_id):
            if self.ctx.profile_uses_oneshot(name):
                continue
            profile_id = profile.id or self.ctx.id_of(ACTION_PROFILE, name)
            for m in profile.members():
                if member.member_id and m.member_id != member.member_id:
                    continue
                action = p4r.Action(action_id=m.action_id)
                action.params.extend(encode_params(m.args, self.ctx.param_specs(m.action_id)))
                yield p4r.Entity(
                    action_profile_member=p4r.ActionProfileMember(
                        action_profile_id=profile_id, member_id=m.member_id, action=action
                    )
                )

    # --- groups -------------------------------------------------------------------------

    def write_group(self, update_type: int, group: p4r.ActionProfileGroup) -> Undo:
        name, profile = self.ctx.profile(group.action_profile_id)
        where = f"action profile {name} group {group.group_id}"
        if not profile.with_selector:
            raise invalid(f"{where}: groups need an action selector, {name} is an action profile")
        self._require_manual(name, where)
        key = (name, group.group_id)
        if update_type == DELETE:
            try:
                old = profile.get_group(group.group_id)
                weights, max_size = dict(old.weights), old.max_size
                profile.delete_group(group.group_id)
            except ActionProfileError as error:
                raise profile_error(error) from None
            old_watch = self.ctx.group_watch.pop(key, None)

            def undo_delete() -> None:
                profile.insert_group(group.group_id, weights, max_size)
                if old_watch is not None:
                    self.ctx.group_watch[key] = old_watch

            return undo_delete
        if update_type not in (INSERT, MODIFY):
            raise invalid(f"{where}: invalid update type {update_type}")
        if group.group_id == 0:
            raise invalid(f"{where}: 0 is not a valid group id")
        weights, watch = self._members_of(profile, group, where)
        if update_type == INSERT:
            try:
                if group.group_id in {g.group_id for g in profile.groups()}:
                    raise already_exists(f"{where}: group already exists")
                max_size = self._check_max_size(profile, group.max_size, where)
                self._check_capacity(profile, weights, max_size, where)
                profile.insert_group(group.group_id, weights, max_size)
            except ActionProfileError as error:
                raise profile_error(error) from None
            self.ctx.group_watch[key] = watch

            def undo_insert() -> None:
                profile.delete_group(group.group_id)
                self.ctx.group_watch.pop(key, None)

            return undo_insert
        try:
            old = profile.get_group(group.group_id)
        except ActionProfileError as error:
            raise profile_error(error) from None
        if group.max_size != 0 and group.max_size != old.max_size:
            raise invalid(
                f"{where}: max_size cannot change after the group is inserted "
                f"({old.max_size} -> {group.max_size})"
            )
        self._check_capacity(profile, weights, old.max_size, where)
        old_weights, old_max = dict(old.weights), old.max_size
        try:
            profile.modify_group(group.group_id, weights)
        except ActionProfileError as error:
            raise profile_error(error) from None
        old_watch = self.ctx.group_watch.get(key)
        self.ctx.group_watch[key] = watch

        def undo_modify() -> None:
            profile.modify_group(group.group_id, old_weights, old_max)
            if old_watch is None:
                self.ctx.group_watch.pop(key, None)
            else:
                self.ctx.group_watch[key] = old_watch

        return undo_modify

    def read_groups(self, group: p4r.ActionProfileGroup) -> Iterator[p4r.Entity]:
        for name, profile in self._profiles(group.action_profile_id):
            if not profile.with_selector or self.ctx.profile_uses_oneshot(name):
                continue
            profile_id = profile.id or self.ctx.id_of(ACTION_PROFILE, name)
            for g in profile.groups():
                if group.group_id and g.group_id != group.group_id:
                    continue
                out = p4r.ActionProfileGroup(
                    action_profile_id=profile_id, group_id=g.group_id, max_size=g.max_size
                )
                watch = self.ctx.group_watch.get((name, g.group_id), {})
                for member_id in sorted(g.weights):
                    m = out.members.add(member_id=member_id, weight=g.weights[member_id])
                    encode_watch(m, watch.get(member_id))
                yield p4r.Entity(action_profile_group=out)

    # --- helpers ------------------------------------------------------------------------

    def _profiles(self, profile_id: int) -> list[tuple[str, ActionProfile]]:
        if profile_id == 0:
            return list(self.ctx.objects.action_profiles.items())
        return [self.ctx.profile(profile_id)]

    def _require_manual(self, name: str, where: str) -> None:
        if self.ctx.profile_uses_oneshot(name):
            raise invalid(
                f"{where}: the profile's tables are programmed with one-shot action sets; "
                "members and groups cannot be mixed with them"
            )

    def _members_of(
        self, profile: ActionProfile, group: p4r.ActionProfileGroup, where: str
    ) -> tuple[dict[int, int], dict[int, tuple[str, Any]]]:
        weights: dict[int, int] = {}
        watch: dict[int, tuple[str, Any]] = {}
        for m in group.members:
            if m.weight <= 0:
                raise invalid(f"{where}: member {m.member_id} weight must be >= 1, got {m.weight}")
        for m in group.members:
            if m.member_id in weights:
                raise invalid(
                    f"{where}: member {m.member_id} listed twice (use the weight instead)"
                )
            try:
                profile.get_member(m.member_id)
            except ActionProfileError as error:
                raise profile_error(error) from None
            weights[m.member_id] = m.weight
            w = decode_watch(m, f"{where} member {m.member_id}")
            if w is not None:
                watch[m.member_id] = w
        return weights, watch

    def _check_max_size(self, profile: ActionProfile, max_size: int, where: str) -> int:
        if max_size < 0:
            raise invalid(f"{where}: max_size must not be negative, got {max_size}")
        if profile.max_group_size and max_size > profile.max_group_size:
            raise invalid(
                f"{where}: max_size {max_size} exceeds the profile's max_group_size "
                f"{profile.max_group_size}"
            )
        return max_size

    def _check_capacity(
        self, profile: ActionProfile, weights: dict[int, int], max_size: int, where: str
    ) -> None:
        limit = max_size or profile.max_group_size
        total = sum(weights.values())
        if limit and total > limit:
            raise resource_exhausted(
                f"{where}: the sum of member weights {total} exceeds the group size {limit}"
            )


# --------------------------------------------------------------------------- one-shot


@dataclass(frozen=True)
class OneShotAction:
    """One validated action of a one-shot action set: action id, its arguments, weight and
    watch port (``("watch", int)`` / ``("watch_port", bytes)``, None: none)."""

    action_id: int
    args: tuple[int, ...]
    weight: int
    watch: tuple[str, Any] | None


def plan_oneshot(
    ctx: Context,
    profile_name: str,
    profile: ActionProfile,
    action_set: p4r.ActionProfileActionSet,
    where: str,
) -> list[OneShotAction]:
    """Validate a one-shot action set (nothing changes yet)."""
    if not profile.with_selector:
        raise invalid(
            f"{where}: one-shot action sets need an action selector, {profile_name} is an "
            "action profile"
        )
    if action_set.action_selection_mode or action_set.size_semantics:
        raise unimplemented(
            f"{where}: only the selector's own selection mode and size semantics are supported"
        )
    if profile.members() and not ctx.profile_uses_oneshot(profile_name):
        raise invalid(
            f"{where}: action profile {profile_name} is programmed with members/groups; "
            "one-shot action sets cannot be mixed with them"
        )
    actions = []
    for position, item in enumerate(action_set.action_profile_actions):
        item_where = f"{where}: one-shot action #{position}"
        if item.weight <= 0:
            raise invalid(f"{item_where}: weight must be >= 1, got {item.weight}")
        action_id, args = decode_profile_action(ctx, profile_name, profile, item.action, item_where)
        actions.append(OneShotAction(action_id, args, item.weight, decode_watch(item, item_where)))
    total = sum(a.weight for a in actions)
    if profile.max_group_size and total > profile.max_group_size:
        raise invalid(
            f"{where}: the one-shot weights sum to {total}, above the selector's "
            f"max_group_size {profile.max_group_size}"
        )
    if profile.size and len(profile.members()) + len(actions) > profile.size:
        raise resource_exhausted(
            f"{where}: action selector {profile_name} cannot hold {len(actions)} more members "
            f"(size {profile.size})"
        )
    return actions


def create_oneshot(
    ctx: Context, profile_name: str, profile: ActionProfile, actions: Sequence[OneShotAction]
) -> tuple[int, tuple[int, ...]]:
    """Create the hidden members and group of a validated one-shot set."""
    member_ids = []
    weights: dict[int, int] = {}
    watch: dict[int, tuple[str, Any]] = {}
    for action in actions:
        member_id = ctx.new_oneshot_id(profile_name)
        profile.insert_member(member_id, action.action_id, action.args)
        member_ids.append(member_id)
        weights[member_id] = action.weight
        if action.watch is not None:
            watch[member_id] = action.watch
    group_id = ctx.new_oneshot_id(profile_name)
    profile.insert_group(group_id, weights, 0)
    ctx.group_watch[(profile_name, group_id)] = watch
    return group_id, tuple(member_ids)


def delete_oneshot(
    ctx: Context,
    profile_name: str,
    profile: ActionProfile,
    group_id: int,
    member_ids: Sequence[int],
) -> Undo:
    """Delete the hidden group and members of a one-shot entry (no longer referenced)."""
    group = profile.get_group(group_id)
    weights = dict(group.weights)
    members = [(m, profile.get_member(m).action_id, profile.get_member(m).args) for m in member_ids]
    watch = ctx.group_watch.pop((profile_name, group_id), None)
    profile.delete_group(group_id)
    for member_id in member_ids:
        profile.delete_member(member_id)

    def undo() -> None:
        for member_id, action_id, args in members:
            profile.insert_member(member_id, action_id, args)
        profile.insert_group(group_id, weights, 0)
        if watch is not None:
            ctx.group_watch[(profile_name, group_id)] = watch

    return undo


__all__ = [
    "ActionProfiles",
    "OneShotAction",
    "create_oneshot",
    "decode_profile_action",
    "delete_oneshot",
    "no_undo",
    "plan_oneshot",
    "profile_error",
]
