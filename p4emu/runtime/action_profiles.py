"""Action profiles and action selectors (v1model ``action_profile`` / ``action_selector``).

A table whose ``implementation`` is a profile does not hold actions in its entries: each
entry points at a **member** (an action with its arguments) or, for a selector, at a
**group** of members, one of which is chosen per packet by hashing the table's
``selector`` key fields.

Entries of such an *indirect* table are stored in the runtime
:class:`~p4emu.runtime.tables.Table` like any other entry, with a reserved action id:

- ``action_id == MEMBER_REF``, ``args == (member_id,)`` — P4Runtime
  ``TableAction.action_profile_member_id``;
- ``action_id == GROUP_REF``, ``args == (group_id,)`` — ``action_profile_group_id``.

The indirect table is built without ``allowed_actions`` / ``action_param_widths`` (its
entries carry references, not actions); whoever inserts entries (the P4Runtime layer)
checks the reference with :meth:`ActionProfile.reference` first and calls
:meth:`ActionProfile.release` when the entry goes away, so a member or group still used
cannot be deleted (P4Runtime FAILED_PRECONDITION). The table's default action stays a
direct action (P4Runtime does not allow indirect default entries in BMv2).

BMv2 semantics reproduced (``src/bm_sim/action_profile.cpp``): members get *handles*,
the lowest free handle first; a group's members are kept in handle order and the member
used for a packet is ``members[hash % len(members)]``, where ``hash`` is the selector's
algorithm over the selector fields packed as a v1model field list. A member of weight
``w`` (P4Runtime ``GroupMember.weight``) appears ``w`` times in that list. A packet that
hits a group with no member runs the table's default action (the lookup is treated as a
miss, but ``hit`` stays True, as BMv2 reports a hit on the entry).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field

from p4emu.runtime.bitbuf import pack_bits
from p4emu.runtime.exceptions import (
    InvalidMemberError,
    MemberExistsError,
    MemberInUseError,
    MemberNotFoundError,
    ProfileFullError,
)

#: ``TableEntry.action_id`` of an indirect entry pointing at a member (``args[0]``).
MEMBER_REF = -1
#: ``TableEntry.action_id`` of an indirect entry pointing at a group (``args[0]``).
GROUP_REF = -2


@dataclass(slots=True)
class ProfileMember:
    """A member: the action it runs. ``handle`` is BMv2's member handle (ordering)."""

    member_id: int
    action_id: int
    args: tuple[int, ...]
    handle: int
    groups: set[int] = field(default_factory=set)
    references: int = 0  # table entries pointing at this member


@dataclass(slots=True)
class ProfileGroup:
    """A group of members with weights; ``choices`` is the per-packet selection list."""

    group_id: int
    max_size: int
    weights: dict[int, int]  # member_id -> weight, in insertion order
    choices: tuple[ProfileMember, ...] = ()
    references: int = 0


class ActionProfile:
    """One ``action_profile`` or ``action_selector`` instance.

    ``action_param_widths`` (action id -> parameter widths) lists the actions members may
    use (those of the tables sharing the profile); ``None`` accepts any action.
    ``hash_function`` (selectors only) maps the packed selector fields to an integer;
    ``selector_widths`` are the widths of the selector key fields, in key order.
    """

    def __init__(
        self,
        name: str,
        *,
        id: int = 0,
        size: int = 0,
        with_selector: bool = False,
        max_group_size: int = 0,
        action_param_widths: Mapping[int, Sequence[int]] | None = None,
        hash_function: Callable[[bytes], int] | None = None,
        selector_widths: Sequence[int] = (),
    ) -> None:
        self.name = name
        self.id = id
        self.size = size
        self.with_selector = with_selector
        self.max_group_size = max_group_size
        self.action_param_widths = (
            {a: tuple(w) for a, w in action_param_widths.items()}
            if action_param_widths is not None
            else None
        )
        self.hash_function = hash_function
        self.selector_widths = tuple(selector_widths)
        self.tables: list[str] = []  # names of the tables using this profile
        self._members: dict[int, ProfileMember] = {}
        self._groups: dict[int, ProfileGroup] = {}
        self._free_handles: list[int] = []
        self._next_handle = 0

    # --- members ----------------------------------------------------------------------

    def insert_member(self, member_id: int, action_id: int, args: Sequence[int] = ()) -> None:
        if member_id in self._members:
            raise MemberExistsError(self.name, f"member {member_id} already exists")
        if self.size and len(self._members) >= self.size:
            raise ProfileFullError(self.name, f"profile is full ({self.size} members)")
        args = tuple(args)
        self._check_action(action_id, args)
        self._members[member_id] = ProfileMember(member_id, action_id, args, self._new_handle())

    def modify_member(self, member_id: int, action_id: int, args: Sequence[int] = ()) -> None:
        member = self.get_member(member_id)
        args = tuple(args)
        self._check_action(action_id, args)
        member.action_id = action_id
        member.args = args

    def delete_member(self, member_id: int) -> None:
        member = self.get_member(member_id)
        if member.references:
            raise MemberInUseError(
                self.name, f"member {member_id} is used by {member.references} table entries"
            )
        if member.groups:
            raise MemberInUseError(
                self.name, f"member {member_id} is in group(s) {sorted(member.groups)}"
            )
        del self._members[member_id]
        self._free_handles.append(member.handle)
        self._free_handles.sort(reverse=True)

    def get_member(self, member_id: int) -> ProfileMember:
        member = self._members.get(member_id)
        if member is None:
            raise MemberNotFoundError(self.name, f"member {member_id} does not exist")
        return member

    def members(self) -> list[ProfileMember]:
        return list(self._members.values())

    # --- groups -----------------------------------------------------------------------

    def insert_group(
        self,
        group_id: int,
        members: Mapping[int, int] | Iterable[tuple[int, int]] = (),
        max_size: int = 0,
    ) -> None:
        """Create a group; ``members`` maps member id -> weight (or ``(id, weight)`` pairs)."""
        self._require_selector()
        if group_id in self._groups:
            raise MemberExistsError(self.name, f"group {group_id} already exists")
        weights = self._check_group(group_id, members, max_size)
        group = ProfileGroup(group_id, max_size, {})
        self._groups[group_id] = group
        self._set_group_members(group, weights)

    def modify_group(
        self,
        group_id: int,
        members: Mapping[int, int] | Iterable[tuple[int, int]] = (),
        max_size: int | None = None,
    ) -> None:
        group = self.get_group(group_id)
        size = group.max_size if max_size is None else max_size
        weights = self._check_group(group_id, members, size)
        group.max_size = size
        self._set_group_members(group, weights)

    def delete_group(self, group_id: int) -> None:
        group = self.get_group(group_id)
        if group.references:
            raise MemberInUseError(
                self.name, f"group {group_id} is used by {group.references} table entries"
            )
        self._set_group_members(group, {})
        del self._groups[group_id]

    def get_group(self, group_id: int) -> ProfileGroup:
        self._require_selector()
        group = self._groups.get(group_id)
        if group is None:
            raise MemberNotFoundError(self.name, f"group {group_id} does not exist")
        return group

    def groups(self) -> list[ProfileGroup]:
        return list(self._groups.values())

    # --- references from table entries ------------------------------------------------

    def reference(self, action_id: int, args: Sequence[int]) -> None:
        """Validate and count an indirect entry's target (``MEMBER_REF``/``GROUP_REF``)."""
        target = self._target(action_id, args)
        target.references += 1

    def release(self, action_id: int, args: Sequence[int]) -> None:
        """Undo :meth:`reference` (entry deleted or modified)."""
        target = self._target(action_id, args)
        if target.references > 0:
            target.references -= 1

    # --- packet path ------------------------------------------------------------------

    def resolve(self, action_id: int, args: tuple[int, ...], selector: tuple[int, ...]):
        """The member an indirect entry runs for a packet, or None (empty/missing group).

        ``selector`` holds the values of the selector key fields (ignored for members).
        """
        if action_id == MEMBER_REF:
            return self._members.get(args[0])
        group = self._groups.get(args[0])
        if group is None or not group.choices:
            return None
        choices = group.choices
        if len(choices) == 1:
            return choices[0]
        data = pack_bits(zip(selector, self.selector_widths))
        return choices[self.hash_function(data) % len(choices)]  # type: ignore[misc]

    # --- internals --------------------------------------------------------------------

    def _new_handle(self) -> int:
        if self._free_handles:
            return self._free_handles.pop()
        handle = self._next_handle
        self._next_handle += 1
        return handle

    def _require_selector(self) -> None:
        if not self.with_selector:
            raise InvalidMemberError(self.name, "an action_profile has no groups (not a selector)")

    def _target(self, action_id: int, args: Sequence[int]) -> ProfileMember | ProfileGroup:
        if len(args) != 1:
            raise InvalidMemberError(self.name, "an indirect entry names exactly one member/group")
        if action_id == MEMBER_REF:
            return self.get_member(args[0])
        if action_id == GROUP_REF:
            return self.get_group(args[0])
        raise InvalidMemberError(
            self.name,
            f"an indirect table entry must name a member or a group, not action {action_id}",
        )

    def _check_action(self, action_id: int, args: tuple[int, ...]) -> None:
        if self.action_param_widths is None:
            return
        widths = self.action_param_widths.get(action_id)
        if widths is None:
            raise InvalidMemberError(
                self.name, f"action id {action_id} is not an action of the profile's tables"
            )
        if len(widths) != len(args):
            raise InvalidMemberError(
                self.name, f"action id {action_id} takes {len(widths)} argument(s), got {len(args)}"
            )
        for position, (arg, width) in enumerate(zip(args, widths)):
            if not 0 <= arg < (1 << width):
                raise InvalidMemberError(
                    self.name,
                    f"action id {action_id} argument {position}: {arg} does not fit in {width} bits",
                )

    def _check_group(
        self,
        group_id: int,
        members: Mapping[int, int] | Iterable[tuple[int, int]],
        max_size: int,
    ) -> dict[int, int]:
        pairs = list(members.items()) if isinstance(members, Mapping) else list(members)
        weights: dict[int, int] = {}
        for member_id, weight in pairs:
            if member_id in weights:
                raise InvalidMemberError(
                    self.name, f"group {group_id}: member {member_id} listed twice"
                )
            if weight < 1:
                raise InvalidMemberError(
                    self.name, f"group {group_id}: member {member_id} weight must be >= 1"
                )
            self.get_member(member_id)
            weights[member_id] = weight
        if max_size < 0:
            raise InvalidMemberError(self.name, f"group {group_id}: max_size must not be negative")
        limit = self.max_group_size
        if limit and max_size > limit:
            raise InvalidMemberError(
                self.name, f"group {group_id}: max_size {max_size} exceeds the profile's {limit}"
            )
        total = sum(weights.values())
        for bound in (max_size, limit):
            if bound and total > bound:
                raise InvalidMemberError(
                    self.name, f"group {group_id}: {total} members exceed the maximum {bound}"
                )
        return weights

    def _set_group_members(self, group: ProfileGroup, weights: dict[int, int]) -> None:
        for member_id in group.weights:
            member = self._members.get(member_id)
            if member is not None:
                member.groups.discard(group.group_id)
        group.weights = dict(weights)
        chosen: list[ProfileMember] = []
        for member_id, weight in weights.items():
            member = self._members[member_id]
            member.groups.add(group.group_id)
            chosen.extend([member] * weight)
        chosen.sort(key=lambda m: m.handle)  # stable: repeated members stay together
        group.choices = tuple(chosen)
