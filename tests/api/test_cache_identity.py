"""Cache identity (docs/clients.md "Cache identity"): a normalized client cache
(Apollo's InMemoryCache keys an object by ``__typename:id``) may trust every
``id``. Each object type either has ``id: ID!`` and says "Cache key" in its
description, or says "No cache key" (a value, cached inside its parent).
Played through the schema: an object key never carries two contents, neither
for two callers (a seat's private state is keyed by its seat, the public
table is the same for all) nor across two games (game-scoped ids start with
the game's id)."""

from __future__ import annotations

from typing import Any

from graphql import (
    FieldNode,
    GraphQLInterfaceType,
    GraphQLNonNull,
    GraphQLObjectType,
    NameNode,
    SelectionSetNode,
    TypeInfo,
    TypeInfoVisitor,
    Visitor,
    parse,
    print_ast,
    visit,
)

from api.graphql.schema import schema
from domain.game.cards import House
from domain.game.state import GameState
from tests.api.conftest import Client
from tests.api.support import GAME, mutation_text, players, seeded, send_action

NOT_YET_KEYED: frozenset[str] = frozenset()
"""Object types exempt from the check: none."""

PER_CALLER_FIELDS = {("Game", "viewer")}
"""Fields of a shared object whose value depends on the caller: one cache
per token (docs/clients.md: reset the cache when the token changes)."""

GLOBAL_TYPES = {"Card", "CardDesign", "Player", "BoosterPack", "Me", "Session"}
"""Types whose ids are not scoped to a game (the same card in two games)."""


def object_types() -> dict[str, GraphQLObjectType]:
    s = schema._schema
    roots = {s.query_type, s.mutation_type, s.subscription_type}
    return {
        name: t
        for name, t in s.type_map.items()
        if isinstance(t, GraphQLObjectType)
        and not name.startswith("__")
        and t not in roots
        and name not in NOT_YET_KEYED
    }


def test_every_object_type_has_an_id_or_says_it_is_a_value() -> None:
    wrong = []
    for name, t in object_types().items():
        field = t.fields.get("id")
        keyed = field is not None and str(field.type) == "ID!"
        description = t.description or ""
        says = "Cache key: `id`" in description
        says_value = "No cache key" in description
        if keyed != says or keyed == says_value:
            wrong.append(name)
    assert wrong == [], f"id field and description disagree: {wrong}"


def test_the_excluded_types_exist() -> None:
    assert set(schema._schema.type_map) >= NOT_YET_KEYED


# ------------------------------------------------------------ normalization
class _AddKeyFields(Visitor):
    """``__typename`` in each selection set, as Apollo Client adds it to
    every document, and ``id`` wherever the type has one, as a client that
    caches selects it."""

    def __init__(self, type_info: TypeInfo) -> None:
        super().__init__()
        self.type_info = type_info

    def leave_selection_set(self, node: SelectionSetNode, *_: Any) -> SelectionSetNode:
        names = {s.name.value for s in node.selections if isinstance(s, FieldNode)}
        parent = self.type_info.get_parent_type()
        wanted = ["__typename"]
        if isinstance(parent, GraphQLObjectType | GraphQLInterfaceType) and "id" in parent.fields:
            wanted.append("id")
        added = tuple(
            FieldNode(name=NameNode(value=n), arguments=(), directives=())
            for n in wanted
            if n not in names
        )
        return SelectionSetNode(selections=(*node.selections, *added)) if added else node


def with_typenames(query: str) -> str:
    type_info = TypeInfo(schema._schema)
    document = visit(parse(query), TypeInfoVisitor(type_info, _AddKeyFields(type_info)))
    return print_ast(document)


Store = dict[str, dict[str, Any]]


def normalize(value: Any, store: Store) -> Any:
    """Apollo's normalization: an object with ``__typename`` and ``id`` goes
    into ``store`` under ``Type:id`` and is replaced by a reference; other
    objects stay inside their parent. The same key met twice in one response
    must hold the same content."""
    if isinstance(value, list):
        return [normalize(v, store) for v in value]
    if not isinstance(value, dict):
        return value
    fields = {k: normalize(v, store) for k, v in value.items()}
    if "__typename" not in value or "id" not in value:
        return fields
    ref = f"{value['__typename']}:{value['id']}"
    seen = store.setdefault(ref, {})
    for k, v in fields.items():
        assert k not in seen or seen[k] == v, f"{ref}.{k}: two contents in one response"
        seen[k] = v
    return {"__ref": ref}


def clashes(stores: dict[str, Store]) -> list[str]:
    """Keys that two stores fill with different content (a field both have)."""
    out = []
    names = list(stores)
    for i, a in enumerate(names):
        for b in names[i + 1 :]:
            for ref in stores[a].keys() & stores[b].keys():
                typename = ref.split(":", 1)[0]
                for f in stores[a][ref].keys() & stores[b][ref].keys():
                    if (typename, f) in PER_CALLER_FIELDS:
                        continue
                    if stores[a][ref][f] != stores[b][ref][f]:
                        out.append(f"{ref}.{f}: {a} vs {b}")
    return out


GAME_QUERY = with_typenames(GAME)
ME_QUERY = with_typenames(
    "{ me { id player { id name createdAt }"
    " collection { edges { node { id house commons { id } } } } } }"
)


def leads_sleepy(state: GameState) -> bool:
    return any(c.house is House.SLEEPY and c.numbered for c in state.seats[0].hand)


async def mid_trick(client: Client, tokens: list[str], text: str) -> tuple[str, Store]:
    """A 4-seat game: messages delivered and expired, the Rat leads Sleepy
    and seat 1 follows face down. Returns the game and the store of every
    mutation result, normalized (each change goes to its caller only)."""
    game_id = await seeded(client, tokens, leads_sleepy, ratSeat=0)
    store: Store = {}

    async def act(token: str, name: str, **args: Any) -> None:
        data = await client.run(with_typenames(mutation_text(name, args)), token, **args)
        assert data["r"]["__typename"] == "GameChange", data
        normalize(data, store)

    await act(tokens[1], "sendMessage", gameId=game_id, to=2, text=f"{text}: pending")
    await act(tokens[0], "sendMessage", gameId=game_id, to=3, text=f"{text}: delivered")
    rat = (await client.run(GAME, tokens[0], id=game_id))["game"]["viewer"]
    lead = next(
        a
        for a in rat["legalActions"]
        if a["kind"] == "PLAY_CARD" and a["card"].startswith("sleepy-")
    )
    assert (await send_action(client, tokens[0], game_id, lead))["__typename"] == "GameChange"
    follower = (await client.run(GAME, tokens[1], id=game_id))["game"]["viewer"]
    play = next(a for a in follower["legalActions"] if a["kind"] == "PLAY_CARD")
    await act(tokens[1], play["mutation"], gameId=game_id, **play["arguments"])
    return game_id, store


async def stores_of(
    client: Client, game_id: str, callers: dict[str, str | None]
) -> dict[str, Store]:
    out: dict[str, Store] = {}
    for name, token in callers.items():
        store: Store = {}
        normalize(await client.run(GAME_QUERY, token, id=game_id), store)
        if token is not None:
            normalize(await client.run(ME_QUERY, token), store)
        out[name] = store
    return out


async def test_no_key_holds_two_contents_for_two_callers(client: Client) -> None:
    tokens = await players(client, 4)
    spectator, _ = await client.new_player("spectator")
    game_id, changes = await mid_trick(client, tokens, "one")
    callers: dict[str, str | None] = {f"seat{i}": t for i, t in enumerate(tokens)}
    callers |= {"spectator": spectator, "anonymous": None}
    stores = await stores_of(client, game_id, callers)
    # The walk saw what it is about: per-seat state, face-down plays, routes.
    seat1 = stores["seat1"]
    assert f"Viewer:{game_id}:1" in seat1 and f"Viewer:{game_id}:0" not in seat1
    assert f"Trick:{game_id}:1" in stores["anonymous"]
    plays = stores["anonymous"][f"Trick:{game_id}:1"]["plays"]
    assert [p["__typename"] for p in plays] == ["FaceUpPlay", "FaceDownPlay"]
    assert seat1[f"Viewer:{game_id}:1"]["faceDownPlays"], "the owner sees its face-down card"
    assert f"MessageRoute:{game_id}:m1" in stores["anonymous"]
    assert {f"Message:{game_id}:m1", f"Message:{game_id}:m2"} <= stores["seat0"].keys()
    assert f"GameChange:{game_id}:{stores['anonymous'][f'Game:{game_id}']['version']}" in changes
    assert clashes({**stores, "changes": changes}) == []


async def test_game_scoped_keys_never_meet_across_games(client: Client) -> None:
    tokens = await players(client, 4)
    a, changes_a = await mid_trick(client, tokens, "a")
    b, changes_b = await mid_trick(client, tokens, "b")
    store_a = (await stores_of(client, a, {"seat0": tokens[0]}))["seat0"] | changes_a
    store_b = (await stores_of(client, b, {"seat0": tokens[0]}))["seat0"] | changes_b
    shared = {ref.split(":", 1)[0] for ref in store_a.keys() & store_b.keys()}
    assert shared <= GLOBAL_TYPES, f"game-scoped keys shared by two games: {shared}"
    assert "Message" in {ref.split(":", 1)[0] for ref in store_a}, "messages were compared"
    assert clashes({"a": store_a, "b": store_b}) == []


def test_ids_are_non_null() -> None:
    for name, t in object_types().items():
        if "id" in t.fields:
            assert isinstance(t.fields["id"].type, GraphQLNonNull), name
