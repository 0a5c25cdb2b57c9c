"""The posting application."""

from __future__ import annotations

from backend_helpers import env_for, run


def test_posting():
    env = env_for(
        "TwitterAPI",
        {"tweets": {"0": {"id": 0, "username": "x", "content": "Hi All", "tags": ["#t"], "mentions": []}},
         "tweet_counter": 1, "comments": {"0": [{"username": "y", "content": "c"}]}},
    )  # fmt: skip
    for call, action in (
        ("post_tweet('x')", "posting"),
        ("retweet(0)", "retweeting"),
        ("comment(0, 'c')", "commenting"),
        ("follow_user('z')", "following"),
        ("list_all_following()", "listing following"),
        ("unfollow_user('z')", "unfollowing"),
    ):
        assert run(env, call) == [
            {"error": f"User not authenticated. Please authenticate before {action}."}
        ]
    assert run(env, "authenticate_twitter('john', 'bad')", "posting_get_login_status()") == [
        {"authentication_status": False},
        {"login_status": False},
    ]
    assert run(env, "authenticate_twitter('john', 'john123')") == [{"authentication_status": True}]
    assert run(env, "post_tweet('Hello', tags=['#a'])") == [
        {"id": 1, "username": "john", "content": "Hello", "tags": ["#a"], "mentions": []}
    ]
    assert run(env, "retweet(1)", "retweet(1)", "retweet(7)") == [
        {"retweet_status": "Successfully retweeted"},
        {"retweet_status": "Already retweeted"},
        {"error": "Tweet with ID 7 not found."},
    ]
    assert run(env, "comment(1, 'nice')", "get_tweet_comments(1)", "get_tweet_comments(0)") == [
        {"comment_status": "Comment added successfully"},
        [{"username": "john", "content": "nice"}],
        [],  # quirk kept: scenario comments keep string keys and are not found
    ]
    assert run(env, "mention(1, ['ann'])", "mention(9, ['ann'])", "get_tweet(1)") == [
        {"mention_status": "Users mentioned successfully"},
        {"error": "Tweet with ID 9 not found."},
        {"id": 1, "username": "john", "content": "Hello", "tags": ["#a"], "mentions": ["ann"]},
    ]
    # A tweet posted without mentions has its own list (the upstream default is shared).
    assert run(env, "post_tweet('Other')")[0]["mentions"] == []
    assert run(env, "follow_user('alice')", "follow_user('z')", "list_all_following()") == [
        {"follow_status": False},
        {"follow_status": True},
        {"following_list": ["alice", "bob", "z"]},
    ]
    assert run(env, "unfollow_user('z')", "unfollow_user('z')") == [
        {"unfollow_status": True},
        {"unfollow_status": False},
    ]
    assert [t["id"] for t in run(env, "get_user_tweets('john')")[0]] == [1, 2]
    assert [t["id"] for t in run(env, "search_tweets('hi')")[0]] == [0]
    assert [t["id"] for t in run(env, "search_tweets('#T')")[0]] == [0]
    assert run(env, "get_user_stats('john')", "get_user_stats('x')") == [
        {"tweet_count": 2, "following_count": 2, "retweet_count": 1},
        {"tweet_count": 1, "following_count": 0, "retweet_count": 0},
    ]
    assert run(env, "get_tweet(5)") == [{"error": "Tweet with ID 5 not found."}]
