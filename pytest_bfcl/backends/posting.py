"""A Twitter-like posting service (``TwitterAPI``)."""

from __future__ import annotations

from typing import Any

from pytest_bfcl.backends.base import Backend
from pytest_bfcl.backends.long_context import LongContext

# The default of an argument left out, told apart from one given as None (stored as given).
_LEFT_OUT: Any = object()


def _unauthenticated(action: str) -> dict[str, str]:
    return {"error": f"User not authenticated. Please authenticate before {action}."}


def _not_found(tweet_id: Any) -> dict[str, str]:
    return {"error": f"Tweet with ID {tweet_id} not found."}


class TwitterAPI(Backend):
    DEFAULTS = {
        "username": "john",
        "password": "john123",
        "authenticated": False,
        "tweets": {},
        "comments": {},
        "retweets": {},
        "following_list": ["alice", "bob"],
        "tweet_counter": 0,
    }

    # The state fields of DEFAULTS, set on every instance by Backend.
    username: str
    password: str
    authenticated: bool
    tweets: dict[int, dict[str, Any]]
    comments: dict[Any, list[dict[str, str]]]  # int keys when added, str keys from a scenario
    retweets: dict[str, list[int]]
    following_list: list[str]
    tweet_counter: int

    def _load_scenario(self, config: dict[str, Any], long_context: LongContext | None) -> None:
        super()._load_scenario(config, long_context)
        # Tweet ids are ints; comments and retweets keep the scenario's string keys.
        self.tweets = {int(k): v for k, v in self.tweets.items()}

    def authenticate_twitter(self, username: str, password: str) -> dict[str, bool]:
        if username == self.username and password == self.password:
            self.authenticated = True
            return {"authentication_status": True}
        return {"authentication_status": False}

    def posting_get_login_status(self) -> dict[str, bool]:
        return {"login_status": bool(self.authenticated)}

    def post_tweet(
        self, content: str, tags: list[str] = _LEFT_OUT, mentions: list[str] = _LEFT_OUT
    ) -> dict[str, Any]:
        if not self.authenticated:
            return _unauthenticated("posting")
        # Deliberate deviation: the benchmark's API shares one default list between every tweet
        # posted without tags/mentions (a mutable default argument); each tweet gets its own.
        # An explicit None is stored as None, as there.
        tweet = {
            "id": self.tweet_counter,
            "username": self.username,
            "content": content,
            "tags": [] if tags is _LEFT_OUT else tags,
            "mentions": [] if mentions is _LEFT_OUT else mentions,
        }
        self.tweets[self.tweet_counter] = tweet
        self.tweet_counter += 1
        return tweet

    def retweet(self, tweet_id: int) -> dict[str, str]:
        if not self.authenticated:
            return _unauthenticated("retweeting")
        if tweet_id not in self.tweets:
            return _not_found(tweet_id)
        mine = self.retweets.setdefault(self.username, [])
        if tweet_id in mine:
            return {"retweet_status": "Already retweeted"}
        mine.append(tweet_id)
        return {"retweet_status": "Successfully retweeted"}

    def comment(self, tweet_id: int, comment_content: str) -> dict[str, str]:
        if not self.authenticated:
            return _unauthenticated("commenting")
        if tweet_id not in self.tweets:
            return _not_found(tweet_id)
        entry = {"username": self.username, "content": comment_content}
        self.comments.setdefault(tweet_id, []).append(entry)
        return {"comment_status": "Comment added successfully"}

    def mention(self, tweet_id: int, mentioned_usernames: list[str]) -> dict[str, str]:
        if tweet_id not in self.tweets:
            return _not_found(tweet_id)
        self.tweets[tweet_id]["mentions"].extend(mentioned_usernames)
        return {"mention_status": "Users mentioned successfully"}

    def follow_user(self, username_to_follow: str) -> dict[str, Any]:
        if not self.authenticated:
            return _unauthenticated("following")
        if username_to_follow in self.following_list:
            return {"follow_status": False}
        self.following_list.append(username_to_follow)
        return {"follow_status": True}

    def list_all_following(self) -> dict[str, Any]:
        if not self.authenticated:
            return _unauthenticated("listing following")
        return {"following_list": self.following_list}

    def unfollow_user(self, username_to_unfollow: str) -> dict[str, Any]:
        if not self.authenticated:
            return _unauthenticated("unfollowing")
        if username_to_unfollow not in self.following_list:
            return {"unfollow_status": False}
        self.following_list.remove(username_to_unfollow)
        return {"unfollow_status": True}

    def get_tweet(self, tweet_id: int) -> dict[str, Any]:
        if tweet_id not in self.tweets:
            return _not_found(tweet_id)
        return self.tweets[tweet_id]

    def get_user_tweets(self, username: str) -> list[dict[str, Any]]:
        return [t for t in self.tweets.values() if t["username"] == username]

    def search_tweets(self, keyword: str) -> list[dict[str, Any]]:
        needle = keyword.lower()
        return [
            t
            for t in self.tweets.values()
            if needle in t["content"].lower() or needle in [tag.lower() for tag in t["tags"]]
        ]

    def get_tweet_comments(self, tweet_id: int) -> Any:
        if tweet_id not in self.tweets:
            return _not_found(tweet_id)
        # Quirk kept: comments loaded from a scenario have string keys and are not found.
        return self.comments.get(tweet_id, [])

    def get_user_stats(self, username: str) -> dict[str, int]:
        return {
            "tweet_count": sum(1 for t in self.tweets.values() if t["username"] == username),
            "following_count": len(self.following_list) if username == self.username else 0,
            "retweet_count": len(self.retweets.get(username, [])),
        }
