"""What a model's tokens cost, and so what each role of a command cost.

Prices come, in this order, from `--prices FILE.toml` (per model), from
`--price-in/--price-out` (every model of the command), as zero for a model that runs on
this machine, and from the price table bundled in `genai-prices` (its snapshot only: it
is never asked to update over the network) for a model reached at its provider's own
endpoint. Anything else (a Python callable, a vLLM or Ollama server behind `--base-url`,
a model the table lacks) is unknown: None, never a guessed number. A price is looked up
once per model per command, not per call.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any
from urllib.parse import urlparse

from chatjudge.calls.usage import Usage
from chatjudge.errors import UsageError
from chatjudge.formats.cost import BudgetRecord, Cost, RoleCostRecord

if TYPE_CHECKING:
    from chatjudge.models.base import Model
    from chatjudge.options import PricingOptions


@dataclass(frozen=True, slots=True)
class Price:
    """USD per million input and output tokens (None: unknown) and where they came from;
    a tiered price (Gemini above 200k prompt tokens) has its top tier's too, from the
    first tier's start."""

    input: float | None
    output: float | None
    source: str
    tier_start: int | None = None
    top_input: float | None = None
    top_output: float | None = None

    @property
    def known(self) -> bool:
        return self.input is not None and self.output is not None

    def usd(self, input_tokens: int, output_tokens: int) -> float:
        """One call's cost, at the tier its input falls in (the price must be known)."""
        per_in, per_out = self.input or 0.0, self.output or 0.0
        if self.tier_start is not None and input_tokens >= self.tier_start:
            per_in, per_out = self.top_input or per_in, self.top_output or per_out
        return (input_tokens * per_in + output_tokens * per_out) / 1e6

    def cost(self, usage: Usage) -> float | None:
        """USD for the tokens sent (cached calls cost nothing); None when unknown."""
        if self.input is None or self.output is None:
            return None
        return round(
            usage.input_tokens * self.input / 1e6 + usage.output_tokens * self.output / 1e6, 6
        )


def table_version() -> str:
    from genai_prices import __version__

    return f"genai-prices {__version__}"


def load_prices(path: Path) -> dict[str, Price]:
    """`--prices FILE.toml`: `[models."openai/my-model"] input = 1.0, output = 2.0`
    (USD per million tokens); a bad file or entry is a usage error naming it."""
    import tomllib  # here: a run without --prices reads no TOML (issue 29, item 8)

    try:
        data = tomllib.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, tomllib.TOMLDecodeError) as exc:
        raise UsageError(f"--prices {path}: cannot read it: {exc}") from exc
    models = data.get("models")
    if not isinstance(models, dict) or set(data) - {"models"}:
        raise UsageError(f'--prices {path}: expected only [models."provider/model"] tables')
    out: dict[str, Price] = {}
    for name, entry in models.items():
        if not isinstance(entry, dict) or set(entry) != {"input", "output"}:
            raise UsageError(f"--prices {path}: model {name!r} needs exactly `input` and `output`")
        for field in ("input", "output"):
            value = entry[field]
            if (
                isinstance(value, bool)
                or not isinstance(value, int | float)
                or not math.isfinite(value)
                or value < 0
            ):
                raise UsageError(
                    f"--prices {path}: model {name!r}, field {field!r}: "
                    f"expected a finite number >= 0 (USD per million tokens), got {value!r}"
                )
        out[name] = Price(float(entry["input"]), float(entry["output"]), f"--prices {path}")
    return out


def price_of(
    model: Model, pricing: PricingOptions, overrides: Mapping[str, Price] | None = None
) -> Price:
    """The price of `model`'s tokens; see the module's docstring for the order."""
    model = model.unwrapped  # on Ray workers: priced as the model they run
    if overrides and model.name in overrides:
        return overrides[model.name]
    if pricing.price_in is not None or pricing.price_out is not None:
        return Price(pricing.price_in or 0.0, pricing.price_out or 0.0, "--price-in/--price-out")
    if model.runs_locally:
        return Price(0.0, 0.0, "local")
    unknown = Price(None, None, "unknown")
    if not at_official_endpoint(model):
        return unknown
    return _from_table(model.provider, model.model) or unknown


def prices_of(models: Iterable[Model], pricing: PricingOptions) -> dict[str, Price]:
    """Every model's price by name, the `--prices` file read once."""
    overrides = load_prices(pricing.prices) if pricing.prices is not None else None
    return {m.name: price_of(m, pricing, overrides) for m in models}


def role_cost(
    prices: Mapping[str, Price], used: Mapping[str, Usage], sent: Mapping[str, Usage]
) -> RoleCostRecord:
    """A role's cost from its models' prices: what the replies it `used` cost (sent for or
    held by the store, each once), and what those it `sent` for (`Ledger.by_model`) cost;
    unknown when any of its models' price is; with the replies that ran past their cap."""
    usd = _priced(prices, used)
    sources = sorted({p.source for p in prices.values()})
    return RoleCostRecord(
        usd=usd,
        priced=usd is not None,
        source=", ".join(sources),
        over_cap_replies=sum(u.over_cap for u in sent.values()),
        invocation_usd=_priced(prices, sent),
    )


def _priced(prices: Mapping[str, Price], usage: Mapping[str, Usage]) -> float | None:
    """`usage` by model at `prices`: None when a model's price is unknown."""
    costs = [prices[name].cost(usage.get(name, Usage())) for name in prices]
    costs += [None for name in usage if name not in prices]  # a model without a price
    return None if any(c is None for c in costs) else round(sum(c or 0.0 for c in costs), 6)


def command_cost(roles: Mapping[str, RoleCostRecord], budget: BudgetRecord | None = None) -> Cost:
    """The whole command's cost: unknown when any role's is, naming those roles; with
    `--max-cost-usd`, its `budget` and how far the command got."""
    unpriced = [name for name, role in roles.items() if role.usd is None]
    total = None if unpriced else round(sum(r.usd or 0.0 for r in roles.values()), 6)
    spent = [r.invocation_usd for r in roles.values()]
    invocation = None if None in spent else round(sum(u or 0.0 for u in spent), 6)
    return Cost(roles=dict(roles), total_usd=total, unpriced=unpriced, budget=budget,
                invocation_usd=invocation)  # fmt: skip


def at_official_endpoint(model: Model) -> bool:
    """Whether the model is reached only at its provider's own endpoint (whose prices the
    table lists and whose tokenizer its own is)."""
    hosts = model.official_hosts
    if not hosts or not model.model:
        return False
    urls: list[Any] = list(getattr(model, "base_urls", None) or [])
    single = getattr(model, "base_url", None)
    if single:
        urls.append(single)
    return all(urlparse(str(u)).hostname in hosts for u in urls)


def _from_table(provider: str, name: str) -> Price | None:
    """The bundled table's price per million tokens, or None where it has none. A tiered
    price (Gemini above 200k prompt tokens) counts at its base tier in the summaries (a
    chat turn is in it); a budget charges a call above it at the top tier."""
    from genai_prices import Usage as TableUsage
    from genai_prices import calc_price

    try:
        found = calc_price(TableUsage(input_tokens=1), name, provider_id=provider).model_price
    except LookupError:
        return None
    (base_in, top_in, start_in) = _per_million(found.input_mtok)
    (base_out, top_out, start_out) = _per_million(found.output_mtok)
    if base_in is None or base_out is None:
        return None
    starts = [s for s in (start_in, start_out) if s is not None]
    if not starts:
        return Price(base_in, base_out, table_version())
    return Price(base_in, base_out, table_version(), min(starts), top_in, top_out)


def _per_million(value: Any) -> tuple[float | None, float | None, int | None]:
    """A table price as (base, top tier, first tier's start): the last two None untiered."""
    from genai_prices.types import TieredPrices

    if isinstance(value, TieredPrices):
        if not value.tiers:
            return float(value.base), None, None
        top = max(float(t.price) for t in value.tiers)
        return float(value.base), top, min(int(t.start) for t in value.tiers)
    return (None if value is None else float(value)), None, None
