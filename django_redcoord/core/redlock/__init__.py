"""Quorum locks over several independent Redis masters (Redlock), fenced; sync and asyncio."""

from .redlock import Redlock, masters, trust_masters

__all__ = ["Redlock", "masters", "trust_masters"]
